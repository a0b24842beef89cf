// The settings pages' navigation, and the clusters and accounts pages.

import { api, call, dialog, h, header, link, root, statusBadge, table, tokenShown } from './core.js';

// settingsNav links the settings pages, the current one marked.
export function settingsNav(current) {
  const pages = { repositories: 'Repositories', certificates: 'Certificates', gpgkeys: 'GnuPG keys', clusters: 'Clusters', projects: 'Projects', accounts: 'Accounts' };
  return h('nav', { class: 'tabs', 'aria-label': 'Settings' }, Object.entries(pages).map(([p, label]) =>
    link('settings/' + p, label, { id: 'nav-' + p, 'aria-current': p === current ? 'page' : null })));
}

export async function renderClusters(user) {
  const list = await api('api/v1/clusters');
  root.replaceChildren(header(user), h('main', { class: 'detail' }, settingsNav('clusters'), h('h1', {}, 'Clusters'),
    table('clusters', ['Name', 'Server', 'Version', 'Connection', ''], (list.items || []).map((c) => [c.name || '', c.server,
      (c.info && c.info.serverVersion) || c.serverVersion || '',
      statusBadge('connection', (c.info && c.info.connectionState && c.info.connectionState.status) || (c.connectionState && c.connectionState.status) || 'Unknown'),
      h('button', { type: 'button', class: 'remove', 'aria-label': `Remove cluster ${c.name || c.server}`, onclick: () =>
        dialog(`Remove cluster ${c.name || c.server}?`, [h('p', {}, 'Its applications stay, unable to sync until it is added again.')], 'Remove',
          () => call(`api/v1/clusters/${encodeURIComponent(c.server)}`, { method: 'DELETE' })) }, 'Remove')]), 'cluster')));
}

export async function renderAccounts(user) {
  const list = await api('api/v1/account');
  root.replaceChildren(header(user), h('main', { class: 'detail' }, settingsNav('accounts'), h('h1', {}, 'Accounts'),
    table('accounts', ['Name', 'Enabled', 'Capabilities', 'Tokens', ''], (list.items || []).map((a) => [a.name, a.enabled ? 'yes' : 'no',
      (a.capabilities || []).join(', '), String((a.tokens || []).length),
      (a.capabilities || []).includes('apiKey') ? h('button', { type: 'button', class: 'new-token', 'data-account': a.name, onclick: async () => {
        const t = await call(`api/v1/account/${encodeURIComponent(a.name)}/token`, { method: 'POST', body: '{}' });
        if (t) tokenShown(t.token);
      } }, 'New token') : '']), 'account')));
}
