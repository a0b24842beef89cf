// The repositories page: the repositories Argo CD reads (git, Helm charts
// from an index or an OCI registry) with their connection state, connected
// over HTTPS (password or TLS client certificate), SSH or as a GitHub App,
// optionally scoped to a project and through a proxy; and the credential
// templates that serve every repository under a URL prefix.

import { api, dialog, h, header, render, root, showError, shown, statusBadge } from './core.js';
import { settingsNav } from './settings.js';

export async function renderRepositories(user) {
  const [repos, creds, projects] = await Promise.all([api('api/v1/repositories'),
    api('api/v1/repocreds').catch(shown('Listing the credential templates', { items: [] })),
    api('api/v1/projects').then((p) => (p.items || []).map((x) => x.metadata.name)).catch(shown('Listing the projects', []))]);
  root.replaceChildren(header(user), h('main', { class: 'detail' }, settingsNav('repositories'),
    h('h1', {}, 'Repositories'), repoTable('repositories', 'api/v1/repositories', repos.items || [], true),
    repoForm('repo', 'Connect a repository', 'api/v1/repositories', true, projects),
    h('h1', {}, 'Credential templates'),
    h('p', {}, 'Credentials for every repository whose URL starts with the template\'s.'),
    repoTable('repocreds', 'api/v1/repocreds', creds.items || [], false),
    repoForm('creds', 'Add a credential template', 'api/v1/repocreds', false, projects)));
}

// repoTable lists repositories (with their connection state) or
// credential templates, each with a Remove button.
function repoTable(id, path, items, withState) {
  const rows = items.map((r) => h('tr', { class: 'repo', 'data-repo': r.url || r.repo },
    h('td', {}, r.url || r.repo), h('td', {}, r.type || 'git'), h('td', {}, r.name || r.username || ''), h('td', {}, r.project || ''),
    withState ? h('td', {}, statusBadge('connection', (r.connectionState && r.connectionState.status) || 'Unknown'),
      r.connectionState && r.connectionState.message ? h('div', { class: 'count' }, r.connectionState.message) : '') : '',
    h('td', {}, h('button', { type: 'button', class: 'edit', 'aria-label': 'Edit ' + (r.url || r.repo),
      onclick: () => document.getElementById(id === 'repositories' ? 'repo-form' : 'creds-form').edit(r) }, 'Edit'), ' ',
    h('button', { type: 'button', class: 'remove', 'aria-label': 'Remove ' + (r.url || r.repo), onclick: () => dialog('Remove ' + (r.url || r.repo),
      [h('p', {}, withState ? 'Applications using it stop syncing.' : 'Repositories it served need credentials of their own.')],
      'Remove', async () => {
        await api(`${path}/${encodeURIComponent(r.url || r.repo)}`, { method: 'DELETE' });
        render();
      }) }, 'Remove'))));
  return h('table', { id }, h('thead', {}, h('tr', {}, ['URL', 'Type', withState ? 'Name' : 'Username', 'Project'].concat(withState ? ['Connection'] : [], ['']).map((c) => h('th', {}, c)))),
    h('tbody', {}, rows));
}

// methods are the ways to connect, as Argo CD's form offers them, and
// the fields each shows.
const methods = {
  https: { label: 'HTTPS', fields: ['username', 'password', 'tlsClientCertData', 'tlsClientCertKey', 'forceHttpBasicAuth', 'useAzureWorkloadIdentity', 'proxy', 'noProxy'] },
  ssh: { label: 'SSH', fields: ['sshPrivateKey'] },
  githubApp: { label: 'GitHub App', fields: ['githubAppID', 'githubAppInstallationID', 'githubAppEnterpriseBaseUrl', 'githubAppPrivateKey', 'proxy', 'noProxy'] },
  googleCloud: { label: 'Google Cloud', fields: ['gcpServiceAccountKey', 'proxy', 'noProxy'] },
  azureServicePrincipal: { label: 'Azure service principal', fields: ['azureServicePrincipalTenantId', 'azureServicePrincipalClientId',
    'azureServicePrincipalClientSecret', 'azureActiveDirectoryEndpoint', 'proxy', 'noProxy'] },
};

// secretFields are the credentials the API never shows: editing a
// repository writes them anew, as Argo CD's update does.
const secretFields = ['password', 'tlsClientCertKey', 'sshPrivateKey', 'githubAppPrivateKey', 'gcpServiceAccountKey', 'azureServicePrincipalClientSecret'];

// methodOf is the connection method of a stored repository.
function methodOf(r) {
  if (r.githubAppID) return 'githubApp';
  if (r.azureServicePrincipalClientId) return 'azureServicePrincipal';
  if (/^(ssh:\/\/|[^/:]+@)/.test(r.url || r.repo || '')) return 'ssh';
  return 'https';
}

// repoForm adds a repository (its connection testable first) or a
// credential template; its edit(r) turns it into the form editing r.
function repoForm(prefix, title, path, testable, projects) {
  let editing = null; // the stored repository being edited
  const result = h('p', { id: prefix + '-connection-result', role: 'status' });
  const id = (name) => prefix + '-' + name;
  const el = (name) => form.elements[id(name)];
  const value = (name) => (el(name) && !el(name).closest('[hidden]') ? (el(name).type === 'checkbox' ? el(name).checked || undefined : el(name).value || undefined) : undefined);
  const body = () => {
    const b = { repo: el('url').value, url: el('url').value, type: el('type').value, name: value('name'), project: value('project'),
      insecure: value('insecure'), enableLfs: value('enableLfs'), enableOCI: value('enableOCI') };
    for (const f of methods[el('method').value].fields) b[f] = value(f);
    return b;
  };
  const input = (name, label, attrs = {}) => h('div', { class: 'field', 'data-field': name }, h('label', { for: id(name) }, label),
    h('input', { id: id(name), name: id(name), ...attrs }));
  const area = (name, label) => h('div', { class: 'field', 'data-field': name }, h('label', { for: id(name) }, label),
    h('textarea', { id: id(name), name: id(name), rows: '4', spellcheck: 'false', autocomplete: 'off' }));
  const box = (name, label) => h('label', { class: 'check', 'data-field': name }, h('input', { type: 'checkbox', name: id(name), id: id(name) }), ' ' + label);
  const methodFields = [
    input('username', 'Username', { autocomplete: 'off' }), input('password', 'Password', { type: 'password', autocomplete: 'new-password' }),
    area('tlsClientCertData', 'TLS client certificate (PEM)'), area('tlsClientCertKey', 'TLS client certificate key (PEM)'),
    box('forceHttpBasicAuth', 'Force HTTP basic auth'),
    area('sshPrivateKey', 'SSH private key'),
    input('githubAppID', 'GitHub App ID', { inputmode: 'numeric' }), input('githubAppInstallationID', 'GitHub App installation ID', { inputmode: 'numeric' }),
    input('githubAppEnterpriseBaseUrl', 'GitHub Enterprise base URL', { placeholder: 'https://ghe.example.com/api/v3' }),
    area('githubAppPrivateKey', 'GitHub App private key'),
    box('useAzureWorkloadIdentity', 'Use Azure workload identity'),
    area('gcpServiceAccountKey', 'Google Cloud service account key (JSON)'),
    input('azureServicePrincipalTenantId', 'Azure tenant ID', { autocomplete: 'off' }), input('azureServicePrincipalClientId', 'Azure client ID', { autocomplete: 'off' }),
    input('azureServicePrincipalClientSecret', 'Azure client secret', { type: 'password', autocomplete: 'new-password' }),
    input('azureActiveDirectoryEndpoint', 'Microsoft Entra ID endpoint', { placeholder: 'https://login.microsoftonline.com' }),
    input('proxy', 'Proxy', { placeholder: 'https://proxy.example.com:3128' }), input('noProxy', 'No proxy for', { placeholder: '.internal.example.com' }),
  ];
  const showMethod = () => {
    const fields = methods[el('method').value].fields;
    for (const f of methodFields) f.hidden = !fields.includes(f.dataset.field);
    const type = el('type').value;
    form.querySelector('[data-field="enableLfs"]').hidden = type !== 'git';
    form.querySelector('[data-field="enableOCI"]').hidden = type !== 'helm';
  };
  const form = h('form', { id: prefix + '-form', class: 'dialog-form repo-form', onsubmit: async (e) => {
    e.preventDefault();
    try {
      if (editing) {
        const q = editing.project ? '?project=' + encodeURIComponent(editing.project) : '';
        await api(`${path}/${encodeURIComponent(editing.url || editing.repo)}${q}`, { method: 'PUT', body: JSON.stringify(body()) });
      } else {
        await api(path, { method: 'POST', body: JSON.stringify(body()) });
      }
      render();
    } catch (err) {
      showError(err);
    }
  } },
  h('h2', {}, title),
  h('p', { class: 'edit-note', hidden: true }, 'Credentials are written anew: enter them again, or leave them empty for none.'),
  h('label', { for: id('method') }, 'Connection method'),
  h('select', { id: id('method'), name: id('method'), onchange: () => showMethod() }, Object.entries(methods).map(([k, m]) => h('option', { value: k }, m.label))),
  h('label', { for: id('type') }, 'Type'),
  h('select', { id: id('type'), name: id('type'), onchange: () => showMethod() }, ['git', 'helm'].map((t) => h('option', { value: t }, t))),
  input('url', testable ? 'Repository URL' : 'URL prefix', { required: true }),
  testable ? input('name', 'Name (Helm)') : '',
  h('label', { for: id('project') }, 'Project'),
  h('select', { id: id('project'), name: id('project') }, h('option', { value: '' }, 'Every project'), projects.map((p) => h('option', { value: p }, p))),
  methodFields,
  box('insecure', 'Skip server verification'), box('enableLfs', 'Enable LFS support'), box('enableOCI', 'Enable OCI'),
  h('div', { class: 'actions' },
    testable ? h('button', { type: 'button', id: id('test'), onclick: async () => {
      result.textContent = 'Testing…';
      try {
        await api(`api/v1/repositories/${encodeURIComponent(el('url').value)}/validate`, { method: 'POST', body: JSON.stringify(body()) });
        result.textContent = 'Connection successful';
      } catch (err) {
        result.textContent = 'Connection failed: ' + err.message;
      }
    } }, 'Test connection') : '',
    h('button', { type: 'submit', id: id('submit') }, testable ? 'Connect' : 'Add'),
    h('button', { type: 'button', id: id('cancel'), hidden: true, onclick: () => render() }, 'Cancel')), result);
  form.edit = (r) => {
    editing = r;
    form.querySelector('h2').textContent = 'Edit ' + (r.url || r.repo);
    form.querySelector('.edit-note').hidden = false;
    el('method').value = methodOf(r);
    el('type').value = r.type || 'git';
    el('url').value = r.url || r.repo;
    el('url').readOnly = true;
    for (const f of ['name', 'project', ...new Set(Object.values(methods).flatMap((m) => m.fields))]) {
      const e = el(f);
      if (!e || secretFields.includes(f)) continue;
      if (e.type === 'checkbox') e.checked = !!r[f]; else e.value = r[f] == null ? '' : String(r[f]);
    }
    for (const f of ['insecure', 'enableLfs', 'enableOCI']) el(f).checked = !!r[f];
    form.querySelector(`#${id('submit')}`).textContent = 'Save';
    form.querySelector(`#${id('cancel')}`).hidden = false;
    showMethod();
    form.scrollIntoView({ block: 'start' });
    el('url').focus();
  };
  showMethod();
  return form;
}
