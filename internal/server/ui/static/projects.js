// The projects pages: the list with a form creating a project, and one
// project's page with Argo CD's tabs: its summary (sources, destinations,
// resources allowed and denied, orphaned resources, signature keys)
// edited in place, its roles and their tokens, its sync windows, and
// its events; and deleting it.

import { api, call, check, deepLinks, dialog, h, header, lines, link, navigate, root, showError, shown, statusBadge, table, tokenShown } from './core.js';
import { settingsNav } from './settings.js';

const projectPath = (name) => `api/v1/projects/${encodeURIComponent(name)}`;

export async function renderProjects(user) {
  const list = await api('api/v1/projects');
  const rows = (list.items || []).map((p) => [link(`settings/projects/${encodeURIComponent(p.metadata.name)}`, p.metadata.name, { 'data-project': p.metadata.name }),
    p.spec.description || '', (p.spec.sourceRepos || []).join(', '), String((p.spec.destinations || []).length)]);
  const form = h('form', { id: 'new-project-form', class: 'dialog-form repo-form', onsubmit: async (e) => {
    e.preventDefault();
    const el = form.elements;
    const name = el.projectName.value;
    try {
      await api('api/v1/projects', { method: 'POST', body: JSON.stringify({ project: { metadata: { name },
        spec: { description: el.projectDescription.value || undefined, sourceRepos: lines(el.projectRepos.value), destinations: destinations.read(el.projectDestinations.value) } } }) });
      navigate(`settings/projects/${encodeURIComponent(name)}`);
    } catch (err) {
      showError(err);
    }
  } }, h('h2', {}, 'New project'),
  h('label', { for: 'projectName' }, 'Name'), h('input', { id: 'projectName', name: 'projectName', required: true }),
  h('label', { for: 'projectDescription' }, 'Description'), h('input', { id: 'projectDescription', name: 'projectDescription' }),
  h('label', { for: 'projectRepos' }, 'Source repositories, one a line (* for any)'), h('textarea', { id: 'projectRepos', name: 'projectRepos', rows: '2' }),
  h('label', { for: 'projectDestinations' }, 'Destinations, one a line: server-or-name namespace'),
  h('textarea', { id: 'projectDestinations', name: 'projectDestinations', rows: '2', placeholder: 'https://kubernetes.default.svc guestbook' }),
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'create-project' }, 'Create')));
  root.replaceChildren(header(user), h('main', { class: 'detail' }, settingsNav('projects'), h('h1', {}, 'Projects'),
    table('projects', ['Name', 'Description', 'Source repositories', 'Destinations'], rows, 'project-row'), form));
}

// destinations shows a project's destinations one a line
// ("server namespace", a cluster's name for its server when given as
// name=<cluster>) and reads them back.
const destinations = {
  show: (ds) => (ds || []).map((d) => `${d.name ? 'name=' + d.name : d.server || '*'} ${d.namespace || '*'}`).join('\n'),
  read: (text) => lines(text).map((l) => {
    const [where, namespace] = l.split(/\s+/);
    return where.startsWith('name=') ? { name: where.slice(5), namespace: namespace || '*' } : { server: where, namespace: namespace || '*' };
  }),
};

// kinds shows group/kind lists one a line ("apps/Deployment", "/ConfigMap"
// for the core group) and reads them back.
const kinds = {
  show: (ks) => (ks || []).map((k) => `${k.group || ''}/${k.kind}`).join('\n'),
  read: (text) => lines(text).map((l) => {
    const i = l.lastIndexOf('/');
    return { group: i < 0 ? '' : l.slice(0, i), kind: i < 0 ? l : l.slice(i + 1) };
  }),
};

const tabs = { summary: 'Summary', roles: 'Roles', windows: 'Sync windows', events: 'Events' };

export async function renderProject(user, r) {
  const p = await api(projectPath(r.project));
  const tab = tabs[new URLSearchParams(location.search).get('tab')] ? new URLSearchParams(location.search).get('tab') : 'summary';
  const bar = h('div', { class: 'actions', role: 'tablist', 'aria-label': 'Project' }, Object.entries(tabs).map(([t, label]) =>
    h('button', { type: 'button', role: 'tab', id: 'project-tab-' + t, 'aria-selected': String(t === tab),
      onclick: () => navigate(`settings/projects/${encodeURIComponent(r.project)}${t === 'summary' ? '' : '?tab=' + t}`, true) }, label)));
  const content = { summary: () => projectSummary(p), roles: () => projectRoles(p), windows: () => syncWindows(p), events: () => projectEvents(p) }[tab];
  root.replaceChildren(header(user), h('main', { class: 'detail' }, settingsNav('projects'),
    h('p', {}, link('settings/projects', '← Projects')),
    h('div', { class: 'toolbar' }, h('h1', {}, p.metadata.name),
      h('button', { type: 'button', id: 'delete-project', onclick: () => dialog(`Delete project ${p.metadata.name}?`,
        [h('p', {}, 'Projects with applications cannot be deleted.')], 'Delete', async () => {
          await api(projectPath(p.metadata.name), { method: 'DELETE' });
          navigate('settings/projects');
        }) }, 'Delete')),
    deepLinks('project-links', api(`${projectPath(p.metadata.name)}/links`).catch(shown('The project\'s links', {}))),
    bar, h('section', { class: 'project', 'data-project': p.metadata.name }, await content())));
}

// saveProject changes the project and writes it back, failing rather
// than overwriting when it changed meanwhile.
async function saveProject(name, change) {
  const fresh = await api(projectPath(name));
  change(fresh.spec);
  return call(projectPath(name), { method: 'PUT', body: JSON.stringify({ project: fresh }) });
}

// projectSummary is the project's settings as a form; saving writes the
// whole summary back.
function projectSummary(p) {
  const s = p.spec;
  const area = (id, label, value, hint) => [h('label', { for: id }, label, hint ? h('span', { class: 'count' }, ` (${hint})`) : ''),
    h('textarea', { id, name: id, rows: '3', spellcheck: 'false' }, value)];
  const orphans = s.orphanedResources;
  const form = h('form', { id: 'project-summary', class: 'dialog-form wide', onsubmit: (e) => {
    e.preventDefault();
    const el = form.elements;
    saveProject(p.metadata.name, (spec) => {
      spec.description = el.description.value || undefined;
      spec.sourceRepos = lines(el.sourceRepos.value);
      spec.sourceNamespaces = lines(el.sourceNamespaces.value);
      spec.destinations = destinations.read(el.destinations.value);
      spec.clusterResourceWhitelist = kinds.read(el.clusterAllow.value);
      spec.clusterResourceBlacklist = kinds.read(el.clusterDeny.value);
      spec.namespaceResourceWhitelist = kinds.read(el.namespaceAllow.value);
      spec.namespaceResourceBlacklist = kinds.read(el.namespaceDeny.value);
      spec.signatureKeys = lines(el.signatureKeys.value).map((keyID) => ({ keyID }));
      spec.orphanedResources = el.orphansOn.checked ? { warn: el.orphansWarn.checked,
        ignore: kinds.read(el.orphansIgnore.value).map((k) => ({ group: k.group, kind: k.kind })) } : undefined;
    });
  } },
  h('label', { for: 'description' }, 'Description'), h('input', { id: 'description', name: 'description', value: s.description || '' }),
  area('sourceRepos', 'Source repositories', (s.sourceRepos || []).join('\n'), 'one a line, * for any'),
  area('sourceNamespaces', 'Source namespaces', (s.sourceNamespaces || []).join('\n'), 'namespaces whose applications may use the project'),
  area('destinations', 'Destinations', destinations.show(s.destinations), 'server or name=<cluster>, then the namespace'),
  area('clusterAllow', 'Cluster resources allowed', kinds.show(s.clusterResourceWhitelist), 'group/kind, one a line'),
  area('clusterDeny', 'Cluster resources denied', kinds.show(s.clusterResourceBlacklist), 'group/kind'),
  area('namespaceAllow', 'Namespace resources allowed', kinds.show(s.namespaceResourceWhitelist), 'group/kind; none: all'),
  area('namespaceDeny', 'Namespace resources denied', kinds.show(s.namespaceResourceBlacklist), 'group/kind'),
  h('fieldset', {}, h('legend', {}, 'Orphaned resources'), check('orphansOn', 'Monitor orphaned resources', !!orphans),
    check('orphansWarn', 'Warn with an application condition', !!(orphans && orphans.warn)),
    area('orphansIgnore', 'Ignored', kinds.show(orphans && orphans.ignore), 'group/kind')),
  area('signatureKeys', 'Signature keys', (s.signatureKeys || []).map((k) => k.keyID).join('\n'), 'GnuPG key IDs commits must be signed with'),
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'save-project' }, 'Save')));
  return form;
}

// projectRoles lists the project's roles with their policies, groups and
// tokens, and edits them.
function projectRoles(p) {
  const rolePath = (role) => `${projectPath(p.metadata.name)}/roles/${encodeURIComponent(role.name)}`;
  const saveRoles = (change) => saveProject(p.metadata.name, (spec) => { spec.roles = change(spec.roles || []); });
  const roleDialog = (role) => dialog(role ? `Role ${role.name}` : `New role in ${p.metadata.name}`, [
    h('label', {}, 'Name', h('input', { name: 'name', required: true, value: role ? role.name : '', readonly: !!role })),
    h('label', {}, 'Description', h('input', { name: 'description', value: (role && role.description) || '' })),
    h('label', {}, 'Policies, one per line', h('textarea', { name: 'policies', rows: '4',
      placeholder: `p, proj:${p.metadata.name}:ROLE, applications, get, ${p.metadata.name}/*, allow` }, ((role && role.policies) || []).join('\n'))),
    h('label', {}, 'Groups, one per line', h('textarea', { name: 'groups', rows: '2' }, ((role && role.groups) || []).join('\n')))],
  'Save', (f) => saveRoles((roles) => {
    const next = { ...(roles.find((x) => x.name === f.name.value) || {}), name: f.name.value, description: f.description.value,
      policies: lines(f.policies.value), groups: lines(f.groups.value) };
    return [...roles.filter((x) => x.name !== next.name), next];
  }));
  const button = (text, cls, onclick, attrs = {}) => h('button', { type: 'button', class: cls, onclick, ...attrs }, text);
  const rows = (p.spec.roles || []).map((role) => [role.name, role.description || '',
    h('ul', { class: 'plain' }, (role.policies || []).map((pol) => h('li', {}, h('code', {}, pol)))),
    (role.groups || []).join(', '),
    h('ul', { class: 'plain' }, (role.jwtTokens || []).map((t) => h('li', { class: 'token' }, `${t.id || t.iat} issued ${new Date(t.iat * 1000).toISOString()} `,
      button('Revoke', 'revoke', () => call(`${rolePath(role)}/token/${t.iat}?id=${encodeURIComponent(t.id || '')}`, { method: 'DELETE' }),
        { 'aria-label': `Revoke token ${t.id || t.iat}` })))),
    h('div', { class: 'actions' },
      button('New token', 'new-token', async () => {
        const t = await call(`${rolePath(role)}/token`, { method: 'POST', body: '{}' });
        if (t) tokenShown(t.token);
      }),
      button('Edit', 'edit-role', () => roleDialog(role)),
      button('Delete', 'delete-role', () => saveRoles((roles) => roles.filter((x) => x.name !== role.name))))]);
  return h('div', {}, h('div', { class: 'actions' }, button('Add role', 'add-role', () => roleDialog())),
    table('roles-' + p.metadata.name, ['Role', 'Description', 'Policies', 'Groups', 'Tokens', ''], rows, 'role'));
}

// syncWindows lists the project's sync windows and adds or removes one.
function syncWindows(p) {
  const windows = p.spec.syncWindows || [];
  const rows = windows.map((w, i) => [statusBadge('window', w.kind), h('code', {}, w.schedule), w.duration, w.timeZone || 'UTC',
    [...(w.applications || []).map((a) => 'apps: ' + a), ...(w.namespaces || []).map((n) => 'namespaces: ' + n), ...(w.clusters || []).map((c) => 'clusters: ' + c)].join('; '),
    w.manualSync ? 'yes' : 'no',
    h('button', { type: 'button', class: 'remove', 'aria-label': `Remove window ${i + 1}`, onclick: () =>
      saveProject(p.metadata.name, (spec) => { spec.syncWindows = (spec.syncWindows || []).filter((_, j) => j !== i); }) }, 'Remove')]);
  const form = h('form', { id: 'window-form', class: 'dialog-form repo-form', onsubmit: (e) => {
    e.preventDefault();
    const el = form.elements;
    const w = { kind: el.windowKind.value, schedule: el.windowSchedule.value, duration: el.windowDuration.value, timeZone: el.windowTimeZone.value || undefined,
      applications: lines(el.windowApps.value), namespaces: lines(el.windowNamespaces.value), clusters: lines(el.windowClusters.value),
      manualSync: el.windowManual.checked };
    saveProject(p.metadata.name, (spec) => { spec.syncWindows = [...(spec.syncWindows || []), w]; });
  } }, h('h2', {}, 'Add a sync window'),
  h('label', { for: 'windowKind' }, 'Kind'), h('select', { id: 'windowKind', name: 'windowKind' }, h('option', { value: 'allow' }, 'allow'), h('option', { value: 'deny' }, 'deny')),
  h('label', { for: 'windowSchedule' }, 'Schedule (cron)'), h('input', { id: 'windowSchedule', name: 'windowSchedule', required: true, placeholder: '0 22 * * *' }),
  h('label', { for: 'windowDuration' }, 'Duration'), h('input', { id: 'windowDuration', name: 'windowDuration', required: true, placeholder: '1h' }),
  h('label', { for: 'windowTimeZone' }, 'Time zone'), h('input', { id: 'windowTimeZone', name: 'windowTimeZone', placeholder: 'UTC' }),
  h('label', { for: 'windowApps' }, 'Applications, one a line'), h('textarea', { id: 'windowApps', name: 'windowApps', rows: '2' }),
  h('label', { for: 'windowNamespaces' }, 'Namespaces, one a line'), h('textarea', { id: 'windowNamespaces', name: 'windowNamespaces', rows: '2' }),
  h('label', { for: 'windowClusters' }, 'Clusters, one a line'), h('textarea', { id: 'windowClusters', name: 'windowClusters', rows: '2' }),
  check('windowManual', 'Allow manual syncs'),
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'add-window' }, 'Add')));
  return h('div', {}, windows.length ? table('sync-windows', ['Kind', 'Schedule', 'Duration', 'Time zone', 'Applies to', 'Manual sync', ''], rows, 'window') :
    h('p', { id: 'sync-windows' }, 'No sync windows.'), form);
}

// projectEvents lists the project's events.
async function projectEvents(p) {
  const events = await api(`${projectPath(p.metadata.name)}/events`);
  const items = events.items || [];
  if (items.length === 0) return h('p', { id: 'project-events' }, 'No events.');
  return table('project-events', ['Type', 'Reason', 'Message', 'Last seen'], items.map((e) => [e.type || '', e.reason || '', e.message || '',
    e.lastTimestamp || e.eventTime || '']), 'event');
}
