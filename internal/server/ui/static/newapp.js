// The new-application page: a form or the manifest.

import { api, check, h, header, link, navigate, root, showError, shown } from './core.js';

const appTemplate = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
spec:
  project: default
  source:
    repoURL: https://github.com/argoproj/argocd-example-apps.git
    path: guestbook
    targetRevision: HEAD
  destination:
    server: https://kubernetes.default.svc
    namespace: guestbook
`;

export async function renderNewApp(user) {
  const projects = await api('api/v1/projects').then((p) => (p.items || []).map((x) => x.metadata.name)).catch(shown('Listing the projects', ['default']));
  const field = (id, label, attrs = {}) => [h('label', { for: id }, label), h('input', { id, name: id, ...attrs })];
  const mode = new URLSearchParams(location.search).get('mode') === 'yaml' ? 'yaml' : 'form';
  const created = (app) => navigate(`applications/${encodeURIComponent(app.metadata.namespace)}/${encodeURIComponent(app.metadata.name)}`);
  const form = h('form', { id: 'new-app-form', class: 'dialog-form wide', onsubmit: async (e) => {
    e.preventDefault();
    const el = form.elements;
    try {
      if (mode === 'yaml') {
        created(await api('api/v1/applications', { method: 'POST', body: el.yaml.value, headers: { 'Content-Type': 'application/yaml' } }));
        return;
      }
      const source = { repoURL: el.repo.value, targetRevision: el.revision.value || 'HEAD' };
      if (el.chart.value) source.chart = el.chart.value; else source.path = el.path.value || '.';
      const app = { metadata: { name: el.name.value }, spec: { project: el.project.value, source,
        destination: { server: el.cluster.value, namespace: el.namespace.value } } };
      const options = el.createNamespace.checked ? ['CreateNamespace=true'] : [];
      if (el.autoSync.checked || options.length) {
        app.spec.syncPolicy = { syncOptions: options };
        if (el.autoSync.checked) app.spec.syncPolicy.automated = { prune: el.prune.checked, selfHeal: el.selfHeal.checked };
      }
      created(await api('api/v1/applications', { method: 'POST', body: JSON.stringify(app) }));
    } catch (err) {
      showError(err);
    }
  } },
  mode === 'yaml' ? [h('label', { for: 'yaml' }, 'Application (YAML or JSON)'),
    h('textarea', { id: 'yaml', name: 'yaml', rows: '18', spellcheck: 'false' }, appTemplate)] : [
    field('name', 'Name', { required: true }),
    h('label', { for: 'project' }, 'Project'), h('select', { id: 'project', name: 'project' }, projects.map((p) => h('option', { value: p }, p))),
    field('repo', 'Repository URL', { required: true }), field('revision', 'Revision', { value: 'HEAD' }),
    field('path', 'Path'), field('chart', 'Helm chart (instead of a path)'),
    field('cluster', 'Cluster URL', { value: 'https://kubernetes.default.svc', required: true }), field('namespace', 'Namespace', { required: true }),
    check('autoSync', 'Automated sync'), check('prune', 'Prune (automated)'), check('selfHeal', 'Self heal (automated)'),
    check('createNamespace', 'Create the namespace')],
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'create' }, 'Create'), link('applications', 'Cancel', { class: 'button' })));
  root.replaceChildren(header(user), h('main', { class: 'detail' },
    h('div', { class: 'toolbar' }, h('h1', {}, 'New application'),
      h('div', { class: 'views', role: 'group', 'aria-label': 'How' }, ['form', 'yaml'].map((m) => h('button', { type: 'button',
        id: 'mode-' + m, 'aria-pressed': String(m === mode), onclick: () => navigate('applications/new' + (m === 'yaml' ? '?mode=yaml' : ''), true) },
      m === 'yaml' ? 'YAML' : 'Form')))), form));
}
