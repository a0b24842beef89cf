// UI extensions, registered the way Argo CD's are: the server serves every
// extension*.js file of its extensions directory together as
// extensions.js, loaded after the UI's modules, and each calls one of
// window.extensionsAPI's register functions. A component is a function of
// its props that returns a DOM node, text, or a promise of either; it is
// drawn in a box of its own, where an error it throws is shown. (The UI is
// plain DOM: an extension built for Argo CD's React UI needs React, which
// this UI does not load.)

import { extensionPages, h, header, root, showError } from './core.js';

const resources = [];
const statusPanels = [];
const topBarActions = [];
const appViews = [];

// glob turns Argo CD's group and kind patterns ("*", "argoproj.io",
// "Rollout") into a test.
function glob(pattern) {
  const re = new RegExp('^' + String(pattern ?? '').split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
  return (value) => re.test(value || '');
}

window.extensionsAPI = {
  // A tab in the resource panel of resources of a group and kind; its
  // props: application, resource (the live object), tree.
  registerResourceExtension(component, group, kind, tabTitle, opts = {}) {
    resources.push({ component, group: glob(group), kind: glob(kind), title: String(tabTitle), icon: opts.icon });
  },
  // A page of its own, linked from the top bar, at path under the UI.
  registerSystemLevelExtension(component, title, path, icon) {
    extensionPages.push({ component, title: String(title), path: String(path).replace(/^\/+|\/+$/g, ''), icon });
  },
  // A block in the app page's status; its props: application and
  // openFlyout, which shows flyout (props: application) in a dialog.
  registerStatusPanelExtension(component, title, id, flyout) {
    statusPanels.push({ component, title: String(title), id: String(id), flyout });
  },
  // A button in the app page's actions opening flyout (props:
  // application) in a dialog, shown when shouldDisplay(application) is
  // true or absent.
  registerTopBarActionMenuExt(component, title, id, flyout, shouldDisplay) {
    topBarActions.push({ component, title: String(title), id: String(id), flyout: flyout || component, shouldDisplay });
  },
  // A view of the app's resources beside tree, network, pods and list;
  // its props: application and tree.
  registerAppViewExtension(component, title, icon, shouldDisplay) {
    appViews.push({ component, title: String(title), icon, shouldDisplay });
  },
};

// mount draws component with props in a box of its own.
export function mount(component, props, attrs = {}) {
  const box = h('div', { class: 'extension', ...attrs });
  Promise.resolve().then(() => component(props)).then(
    (out) => box.replaceChildren(out instanceof Node ? out : String(out ?? '')),
    (err) => box.replaceChildren(h('p', { class: 'error-text' }, 'The extension failed: ' + (err && err.message ? err.message : String(err)))));
  return box;
}

// flyout shows component (props: application) in a dialog.
function flyout(title, component, app) {
  const d = h('dialog', { 'aria-label': title, class: 'flyout' }, h('div', { class: 'dialog-form' }, h('h2', {}, title),
    mount(component, { application: app }),
    h('div', { class: 'actions' }, h('button', { type: 'button', id: 'flyout-close', onclick: () => d.close() }, 'Close'))));
  d.addEventListener('close', () => d.remove());
  document.body.append(d);
  d.showModal();
}

const shown = (e, app) => {
  try {
    return !e.shouldDisplay || !!e.shouldDisplay(app);
  } catch (err) {
    showError(err);
    return false;
  }
};

// resourceTabs are the resource extensions for res: their tab titles
// and how each draws.
export function resourceTabs(res) {
  return resources.filter((e) => e.group(res.group) && e.kind(res.kind));
}

// statusBlocks are the app page's status panel extensions, drawn.
export function statusBlocks(app) {
  return statusPanels.map((e) => h('section', { class: 'status-extension', 'data-extension': e.id, 'aria-label': e.title },
    h('h3', {}, e.title), mount(e.component, { application: app, openFlyout: () => flyout(e.title, e.flyout || e.component, app) })));
}

// actionButtons are the top bar action extensions for app, as buttons.
export function actionButtons(app) {
  return topBarActions.filter((e) => shown(e, app)).map((e) => h('button', { type: 'button', id: 'ext-action-' + e.id,
    onclick: () => flyout(e.title, e.flyout, app) }, e.title));
}

// views are app's view extensions, each with the key its view has in
// the URL (ext-<n>).
export function views(app) {
  return appViews.map((e, i) => ({ key: 'ext-' + i, ...e })).filter((e) => shown(e, app));
}

// renderExtensionPage draws a system-level extension's page.
export async function renderExtensionPage(user, r) {
  root.replaceChildren(header(user), h('main', { class: 'detail' }, h('h1', {}, r.extension.title),
    mount(r.extension.component, {}, { id: 'extension-page' })));
}
