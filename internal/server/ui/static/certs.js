// The certificates and GnuPG keys pages: the TLS certificates and SSH
// known hosts repositories are verified against (argocd-tls-certs-cm,
// argocd-ssh-known-hosts-cm), and the public keys commits are verified
// with (argocd-gpg-keys-cm).

import { api, call, dialog, h, header, root, table } from './core.js';
import { settingsNav } from './settings.js';

export async function renderCertificates(user) {
  const list = await api('api/v1/certificates');
  const items = list.items || [];
  const remove = (c) => h('button', { type: 'button', class: 'remove', 'aria-label': `Remove ${c.certType} certificate of ${c.serverName}`, onclick: () =>
    dialog(`Remove the ${c.certType} certificate of ${c.serverName}?`, [h('p', {}, 'Connections to that server are no longer verified with it.')], 'Remove',
      () => call(`api/v1/certificates?${new URLSearchParams({ hostNamePattern: c.serverName, certType: c.certType, certSubType: c.certSubType || '' })}`,
        { method: 'DELETE' })) }, 'Remove');
  const rows = items.map((c) => [c.serverName, c.certType, c.certSubType || '', h('code', { class: 'wrap' }, c.certInfo || ''), remove(c)]);
  const tlsForm = h('form', { id: 'tls-cert-form', class: 'dialog-form repo-form', onsubmit: (e) => {
    e.preventDefault();
    const el = tlsForm.elements;
    call('api/v1/certificates', { method: 'POST', body: JSON.stringify({ items: [{ serverName: el.tlsServer.value, certType: 'https', certData: btoa(el.tlsData.value) }] }) });
  } }, h('h2', {}, 'Add a TLS certificate'),
  h('label', { for: 'tlsServer' }, 'Repository server name'), h('input', { id: 'tlsServer', name: 'tlsServer', required: true, placeholder: 'git.example.com' }),
  h('label', { for: 'tlsData' }, 'TLS certificate (PEM)'), h('textarea', { id: 'tlsData', name: 'tlsData', rows: '6', required: true, spellcheck: 'false' }),
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'tls-cert-submit' }, 'Create')));
  const sshForm = h('form', { id: 'ssh-known-hosts-form', class: 'dialog-form repo-form', onsubmit: (e) => {
    e.preventDefault();
    // One known_hosts line each: "server type key".
    const entries = sshForm.elements.knownHosts.value.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')).map((l) => {
      const [serverName, certSubType, ...key] = l.split(/\s+/);
      return { serverName, certType: 'ssh', certSubType, certData: btoa(key.join(' ')) };
    });
    call('api/v1/certificates', { method: 'POST', body: JSON.stringify({ items: entries }) });
  } }, h('h2', {}, 'Add SSH known hosts'),
  h('label', { for: 'knownHosts' }, 'SSH known hosts data (known_hosts lines)'),
  h('textarea', { id: 'knownHosts', name: 'knownHosts', rows: '6', required: true, spellcheck: 'false', placeholder: 'git.example.com ssh-ed25519 AAAA…' }),
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'ssh-known-hosts-submit' }, 'Create')));
  root.replaceChildren(header(user), h('main', { class: 'detail' }, settingsNav('certificates'), h('h1', {}, 'Repository certificates and known hosts'),
    items.length ? table('certificates', ['Server', 'Type', 'Subtype', 'Info', ''], rows, 'certificate') : h('p', { id: 'certificates' }, 'No certificates.'),
    h('div', { class: 'forms' }, tlsForm, sshForm)));
}

export async function renderGPGKeys(user) {
  const list = await api('api/v1/gpgkeys');
  const items = list.items || [];
  const rows = items.map((k) => [h('code', {}, k.keyID), k.subType || '', k.owner || '', k.trust || '', h('code', { class: 'wrap' }, k.fingerprint || ''),
    h('button', { type: 'button', class: 'remove', 'aria-label': `Remove key ${k.keyID}`, onclick: () => dialog(`Remove GnuPG key ${k.keyID}?`,
      [h('p', {}, 'Commits signed with it no longer pass signature verification.')], 'Remove',
      () => call(`api/v1/gpgkeys?keyID=${encodeURIComponent(k.keyID)}`, { method: 'DELETE' })) }, 'Remove')]);
  const form = h('form', { id: 'gpg-key-form', class: 'dialog-form repo-form', onsubmit: (e) => {
    e.preventDefault();
    call('api/v1/gpgkeys', { method: 'POST', body: JSON.stringify({ keyData: form.elements.keyData.value }) });
  } }, h('h2', {}, 'Add a GnuPG public key'),
  h('label', { for: 'keyData' }, 'Public key (ASCII armoured)'),
  h('textarea', { id: 'keyData', name: 'keyData', rows: '8', required: true, spellcheck: 'false', placeholder: '-----BEGIN PGP PUBLIC KEY BLOCK-----' }),
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'gpg-key-submit' }, 'Create')));
  root.replaceChildren(header(user), h('main', { class: 'detail' }, settingsNav('gpgkeys'), h('h1', {}, 'GnuPG keys'),
    items.length ? table('gpgkeys', ['Key ID', 'Type', 'Identity', 'Trust', 'Fingerprint', ''], rows, 'gpgkey') : h('p', { id: 'gpgkeys' }, 'No keys.'),
    form));
}
