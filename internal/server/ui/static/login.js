// The login page: local accounts and, when configured, SSO.

import { api, base, h, navigate, root, settings, showError } from './core.js';

export async function renderLogin() {
  const params = new URLSearchParams(location.search);
  const back = params.get('return_url') || 'applications';
  const s = await settings();
  const user = h('input', { id: 'username', name: 'username', autocomplete: 'username', required: true });
  const pass = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const form = h('form', { class: 'login', onsubmit: async (e) => {
    e.preventDefault();
    try {
      await api('api/v1/session', { method: 'POST', body: JSON.stringify({ username: user.value, password: pass.value }) });
      navigate(safeReturn(back), true);
    } catch (err) {
      showError(err);
    }
  } },
  h('h1', {}, 'Capstan'),
  h('label', { for: 'username' }, 'Username'), user,
  h('label', { for: 'password' }, 'Password'), pass,
  h('button', { type: 'submit', id: 'sign-in' }, 'Sign in'),
  (s.oidcConfig || s.dexConfig) ?
    h('a', { class: 'button sso', href: 'auth/login?return_url=' + encodeURIComponent(base() + safeReturn(back)) },
      'Log in via ' + ((s.oidcConfig && s.oidcConfig.name) || 'SSO')) : null);
  root.replaceChildren(h('main', { class: 'center' }, form));
  user.focus();
}

// safeReturn keeps a return URL inside the UI.
function safeReturn(rel) {
  return /^[a-z]/.test(rel) && !rel.includes('//') ? rel : 'applications';
}
