// The user info page: who the session is (name, issuer, groups) and, for
// a local account, a password change; and the help page with the CLI.

import { api, base, h, header, root, settings, showError } from './core.js';

export async function renderUserInfo(user) {
  const result = h('p', { id: 'password-result', role: 'status' });
  const form = h('form', { id: 'password-form', class: 'dialog-form repo-form', onsubmit: async (e) => {
    e.preventDefault();
    const el = form.elements;
    if (el.newPassword.value !== el.confirmPassword.value) {
      result.textContent = 'The new passwords do not match.';
      return;
    }
    try {
      await api('api/v1/account/password', { method: 'PUT', body: JSON.stringify({ name: user.username,
        currentPassword: el.currentPassword.value, newPassword: el.newPassword.value }) });
      form.reset();
      result.textContent = 'Password updated.';
    } catch (err) {
      result.textContent = '';
      showError(err);
    }
  } }, h('h2', {}, 'Update password'),
  h('label', { for: 'currentPassword' }, 'Current password'),
  h('input', { id: 'currentPassword', name: 'currentPassword', type: 'password', autocomplete: 'current-password', required: true }),
  h('label', { for: 'newPassword' }, 'New password'),
  h('input', { id: 'newPassword', name: 'newPassword', type: 'password', autocomplete: 'new-password', required: true }),
  h('label', { for: 'confirmPassword' }, 'Confirm new password'),
  h('input', { id: 'confirmPassword', name: 'confirmPassword', type: 'password', autocomplete: 'new-password', required: true }),
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'password-submit' }, 'Save new password')), result);
  const local = !user.iss || user.iss === 'argocd';
  root.replaceChildren(header(user), h('main', { class: 'detail' }, h('h1', {}, 'User info'),
    h('dl', { id: 'user-info', class: 'summary' }, h('dt', {}, 'Username'), h('dd', {}, user.username || ''),
      h('dt', {}, 'Issuer'), h('dd', {}, user.iss || 'argocd'),
      user.groups && user.groups.length ? [h('dt', {}, 'Groups'), h('dd', {}, user.groups.join(', '))] : ''),
    local ? form : h('p', {}, 'Your identity provider manages your password.')));
}

export async function renderHelp(user) {
  const server = location.host;
  const help = (await settings()).help || {};
  const binaries = Object.entries(help.binaryUrls || {}).filter(([, u]) => /^https?:\/\//.test(u));
  root.replaceChildren(header(user), h('main', { class: 'detail help' }, h('h1', {}, 'Help'),
    h('p', {}, 'Capstan serves Argo CD\'s API, so Argo CD\'s own command-line client works against it:'),
    h('pre', { id: 'cli-login' }, `argocd login ${server}${base() === '/' ? '' : ' --grpc-web-root-path ' + base()}`),
    h('p', {}, 'The same commands as with Argo CD follow, for example:'),
    h('pre', {}, 'argocd app list\nargocd app sync guestbook\nargocd app diff guestbook'),
    h('p', {}, 'Capstan\'s own binary offers those commands too: ', h('code', {}, 'capstan app list'), '.'),
    binaries.length ? [h('h2', {}, 'Download the CLI'), h('ul', { id: 'cli-downloads' }, binaries.map(([platform, u]) =>
      h('li', {}, h('a', { href: u, rel: 'noopener noreferrer' }, platform))))] : '',
    help.chatUrl && /^https?:\/\//.test(help.chatUrl) ? h('p', {}, h('a', { href: help.chatUrl, id: 'help-chat', target: '_blank', rel: 'noopener noreferrer' }, help.chatText || 'Chat now!')) : '',
    h('p', {}, h('a', { href: 'swagger-ui', id: 'api-docs' }, 'The API\'s documentation'), ' (OpenAPI).')));
}
