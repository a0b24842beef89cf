// Capstan's web UI: routes by the URL, draws with the DOM, and asks the
// API for everything (the session is the argocd.token cookie). This
// module registers the pages and draws the first one.

import { renderApp } from './app.js';
import { renderAppSet, renderAppSets } from './appsets.js';
import { renderCertificates, renderGPGKeys } from './certs.js';
import { render, setPages } from './core.js';
import { renderExtensionPage } from './ext.js';
import { renderApplications } from './list.js';
import { renderLogin } from './login.js';
import { renderNewApp } from './newapp.js';
import { renderRepositories } from './repos.js';
import { renderProject, renderProjects } from './projects.js';
import { renderAccounts, renderClusters } from './settings.js';
import { renderHelp, renderUserInfo } from './user.js';

setPages({ login: renderLogin, app: renderApp, new: renderNewApp, repositories: renderRepositories, clusters: renderClusters,
  projects: renderProjects, accounts: renderAccounts, applications: renderApplications, appsets: renderAppSets, appset: renderAppSet,
  project: renderProject, certificates: renderCertificates, gpgkeys: renderGPGKeys, userinfo: renderUserInfo, help: renderHelp, extension: renderExtensionPage });
window.addEventListener('popstate', render);
// The first page is drawn once the UI extensions have registered:
// extensions.js runs after these modules, before DOMContentLoaded.
if (document.readyState === 'complete') render(); else document.addEventListener('DOMContentLoaded', render);
