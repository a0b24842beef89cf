package server

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/browser"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gpgkey"
	"github.com/capstan-cd/capstan/internal/testing/hostkey"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestUISettingsPages: a TLS certificate and SSH known hosts added and
// removed on the certificates page, a GnuPG key on its page, credential
// templates by SSH key, by TLS client certificate and as a GitHub App
// from the repository form, the
// admin's password changed on the user info page, and the help page's
// CLI login.
func TestUISettingsPages(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{
		"ui.bannercontent": "Maintenance tonight", "ui.bannerurl": "https://status.example.com", "ui.cssurl": "custom/theme.css",
		"statusbadge.enabled": "true", "help.download.linux-amd64": "https://downloads.example.com/argocd-linux-amd64",
		"application.links": "- url: https://dash.example.com/{{.app.metadata.name}}\n  title: Dashboard\n- url: javascript:alert(1)\n  title: Evil\n",
		"project.links":     "- url: https://wiki.example.com/{{.project.metadata.name}}\n  title: Wiki\n",
	}}); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Create(ctx, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/demo.git", Path: "web"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}}}); err != nil {
		t.Fatal(err)
	}
	p := &page{Page: browser.Open(t, 5*time.Minute), f: f}
	p.Do("an app's page", chromedp.Navigate(f.base+"/applications/"+f.ns+"/web"))
	p.Login("admin", f.initialPassword())

	// argocd-cm's banner, style sheet, status badge and deep links.
	p.Until("the banner, the style sheet, the badge and the links", `!!document.querySelector('#app-links a[href="https://dash.example.com/web"]') &&
		!document.querySelector('#app-links a[href^="javascript"]') && !!document.querySelector('#banner a[href="https://status.example.com"]') &&
		document.querySelector('#banner').innerText.includes('Maintenance tonight') && !!document.querySelector('link#custom-css[href="custom/theme.css"]') &&
		!!document.querySelector('#status-badge img') && document.querySelector('#badge-markdown').value.includes('api/badge?name=web')`, 10*time.Second)
	p.Do("closing the banner", chromedp.Click(chromedp.CSS("#banner-close")), chromedp.Navigate(f.base+"/settings/certificates"))
	p.Until("the certificates page", `!!document.querySelector('#tls-cert-form')`, 10*time.Second)
	if p.Eval(`String(!!document.querySelector('#banner'))`) != "false" {
		t.Error("a closed banner is shown again")
	}

	certPEM, knownHost := trustData(t)
	p.Do("a TLS certificate", chromedp.SendKeys(chromedp.CSS("#tlsServer"), "git.example.com"),
		chromedp.SetValue(chromedp.CSS("#tlsData"), certPEM), chromedp.Click(chromedp.CSS("#tls-cert-submit")))
	p.Until("listed", `[...document.querySelectorAll('#certificates tr.certificate')].some((r) => r.innerText.includes('git.example.com') && r.innerText.includes('https'))`, 10*time.Second)
	p.Do("SSH known hosts", chromedp.SetValue(chromedp.CSS("#knownHosts"), knownHost), chromedp.Click(chromedp.CSS("#ssh-known-hosts-submit")))
	p.Until("listed", `[...document.querySelectorAll('#certificates tr.certificate')].some((r) => r.innerText.includes('ssh.example.com') && r.innerText.includes('ssh-ed25519'))`, 10*time.Second)
	var tls corev1.ConfigMap
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: settings.TLSCertsConfigMap}, &tls); err != nil || !strings.Contains(tls.Data["git.example.com"], "BEGIN CERTIFICATE") {
		t.Errorf("argocd-tls-certs-cm: %v %v", err, tls.Data)
	}
	p.Screenshot("certificates")
	p.Do("removing the TLS certificate", chromedp.Click(chromedp.CSS(`#certificates button[aria-label="Remove https certificate of git.example.com"]`)),
		chromedp.WaitVisible(chromedp.CSS("dialog[open]")), chromedp.Click(chromedp.CSS("#dialog-ok")))
	p.Until("gone, the known host kept", `![...document.querySelectorAll('#certificates tr.certificate')].some((r) => r.innerText.includes('git.example.com')) &&
		document.querySelector('#certificates').innerText.includes('ssh.example.com')`, 10*time.Second)

	key := gpgkey.New(t, "jane")
	p.Do("the GnuPG keys", chromedp.Click(chromedp.CSS("#nav-gpgkeys")), chromedp.WaitVisible(chromedp.CSS("#keyData")),
		chromedp.SetValue(chromedp.CSS("#keyData"), key.Armored()), chromedp.Click(chromedp.CSS("#gpg-key-submit")))
	p.Until("the key listed", `!!document.querySelector('#gpgkeys') && document.querySelector('#gpgkeys').innerText.includes('`+key.ID()+`') &&
		document.querySelector('#gpgkeys').innerText.includes('jane@example.com')`, 10*time.Second)
	p.Do("removing it", chromedp.Click(chromedp.CSS(`#gpgkeys button[aria-label="Remove key `+key.ID()+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("dialog[open]")), chromedp.Click(chromedp.CSS("#dialog-ok")))
	p.Until("no keys", `document.querySelector('#gpgkeys').innerText === 'No keys.'`, 10*time.Second)

	// Credential templates by SSH key and as a GitHub App, scoped to the
	// default project: their Secrets hold what the form was given.
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	sshKey := string(pem.EncodeToMemory(block))
	p.Do("the repositories", chromedp.Click(chromedp.CSS("#nav-repositories")), chromedp.WaitVisible(chromedp.CSS("#creds-form")))
	p.Do("an SSH template", chromedp.SetValue(chromedp.CSS("#creds-method"), "ssh"))
	p.Eval(`(document.querySelector('#creds-method').dispatchEvent(new Event('change')), '')`)
	if p.Eval(`String(document.querySelector('[data-field="creds-password"], #creds-password').closest('[hidden]') !== null)`) != "true" {
		t.Error("the password is offered for an SSH connection")
	}
	p.Do("filling it", chromedp.SendKeys(chromedp.CSS("#creds-url"), "git@ssh.example.com:"), chromedp.SetValue(chromedp.CSS("#creds-sshPrivateKey"), sshKey),
		chromedp.SetValue(chromedp.CSS("#creds-project"), "default"), chromedp.Click(chromedp.CSS("#creds-submit")))
	p.Until("the SSH template listed", `!!document.querySelector('#repocreds tr.repo[data-repo="git@ssh.example.com:"]')`, 10*time.Second)
	p.Do("an HTTPS template with a TLS client certificate", chromedp.SendKeys(chromedp.CSS("#creds-url"), "https://git.example.com/shop"),
		chromedp.SetValue(chromedp.CSS("#creds-tlsClientCertData"), certPEM), chromedp.SetValue(chromedp.CSS("#creds-tlsClientCertKey"), sshKey),
		chromedp.SendKeys(chromedp.CSS("#creds-proxy"), "http://proxy.example.com:3128"), chromedp.Click(chromedp.CSS("#creds-submit")))
	p.Until("the HTTPS template listed", `!!document.querySelector('#repocreds tr.repo[data-repo="https://git.example.com/shop"]')`, 10*time.Second)
	p.Do("a GitHub App template", chromedp.SetValue(chromedp.CSS("#creds-method"), "githubApp"))
	p.Eval(`(document.querySelector('#creds-method').dispatchEvent(new Event('change')), '')`)
	p.Do("filling it", chromedp.SendKeys(chromedp.CSS("#creds-url"), "https://github.com/shop"), chromedp.SendKeys(chromedp.CSS("#creds-githubAppID"), "123"),
		chromedp.SendKeys(chromedp.CSS("#creds-githubAppInstallationID"), "456"), chromedp.SetValue(chromedp.CSS("#creds-githubAppPrivateKey"), sshKey),
		chromedp.Click(chromedp.CSS("#creds-submit")))
	p.Until("the GitHub App template listed", `!!document.querySelector('#repocreds tr.repo[data-repo="https://github.com/shop"]')`, 10*time.Second)
	p.Do("an Azure service principal template", chromedp.SetValue(chromedp.CSS("#creds-method"), "azureServicePrincipal"))
	p.Eval(`(document.querySelector('#creds-method').dispatchEvent(new Event('change')), '')`)
	p.Do("filling it", chromedp.SendKeys(chromedp.CSS("#creds-url"), "https://dev.azure.com/shop"), chromedp.SendKeys(chromedp.CSS("#creds-azureServicePrincipalTenantId"), "tenant-1"),
		chromedp.SendKeys(chromedp.CSS("#creds-azureServicePrincipalClientId"), "client-1"), chromedp.SendKeys(chromedp.CSS("#creds-azureServicePrincipalClientSecret"), "sp-secret-1"),
		chromedp.Click(chromedp.CSS("#creds-submit")))
	p.Until("the Azure template listed", `!!document.querySelector('#repocreds tr.repo[data-repo="https://dev.azure.com/shop"]')`, 10*time.Second)
	if text := p.Eval(`document.body.innerText`); strings.Contains(text, "PRIVATE KEY") || strings.Contains(text, "sp-secret-1") {
		t.Error("a private key or client secret is shown")
	}
	eventually.String(t, "the templates' Secrets", func() string {
		var list corev1.SecretList
		if err := f.c.List(ctx, &list, client.InNamespace(f.ns), client.MatchingLabels{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepoCredentials}); err != nil {
			return err.Error()
		}
		got := map[string]map[string]string{}
		for _, s := range list.Items {
			m := map[string]string{}
			for k, v := range s.Data {
				m[k] = string(v)
			}
			got[m["url"]] = m
		}
		ssh, tls, app, azure := got["git@ssh.example.com:"], got["https://git.example.com/shop"], got["https://github.com/shop"], got["https://dev.azure.com/shop"]
		if azure == nil || azure["azureServicePrincipalTenantId"] != "tenant-1" || azure["azureServicePrincipalClientId"] != "client-1" ||
			azure["azureServicePrincipalClientSecret"] != "sp-secret-1" || azure["password"] != "" {
			return fmt.Sprintf("the Azure template %v", azure)
		}
		if ssh == nil || ssh["sshPrivateKey"] != sshKey || ssh["project"] != "default" || ssh["password"] != "" {
			return fmt.Sprintf("the SSH template %v", ssh)
		}
		if tls == nil || tls["tlsClientCertData"] != certPEM || tls["tlsClientCertKey"] != sshKey || tls["proxy"] != "http://proxy.example.com:3128" {
			return fmt.Sprintf("the HTTPS template %v", tls)
		}
		if app == nil || app["githubAppID"] != "123" || app["githubAppInstallationID"] != "456" || app["githubAppPrivateKey"] != sshKey || app["password"] != "" {
			return fmt.Sprintf("the GitHub App template %v", app)
		}
		return ""
	})

	// A project created, its summary and a sync window edited, deleted.
	p.Do("the projects", chromedp.Navigate(f.base+"/settings/projects"))
	p.Until("the projects page", `!!document.querySelector('#new-project-form')`, 10*time.Second)
	p.Do("a new project", chromedp.SendKeys(chromedp.CSS("#projectName"), "shop"), chromedp.SendKeys(chromedp.CSS("#projectDescription"), "The shop's apps"),
		chromedp.SetValue(chromedp.CSS("#projectRepos"), "https://git.example.com/shop/*"),
		chromedp.SetValue(chromedp.CSS("#projectDestinations"), "https://kubernetes.default.svc shop-*\nname=other payments"),
		chromedp.Click(chromedp.CSS("#create-project")))
	p.Until("its page", `location.pathname.endsWith('/settings/projects/shop') && !!document.querySelector('#project-summary') &&
		!!document.querySelector('#project-links a[href="https://wiki.example.com/shop"]')`, 10*time.Second)
	// Saving draws the page again when the API answers; the windows tab is
	// opened only after that, so the redraw cannot reset its form midway.
	drawn := `String(performance.getEntriesByName('capstan:project').length)`
	before := p.Eval(drawn)
	p.Do("its summary edited", chromedp.SetValue(chromedp.CSS("#clusterAllow"), "/Namespace"), chromedp.SetValue(chromedp.CSS("#namespaceDeny"), "/Secret\nnetworking.k8s.io/NetworkPolicy"),
		chromedp.Click(chromedp.CSS("#opt-orphansOn")), chromedp.Click(chromedp.CSS("#opt-orphansWarn")), chromedp.SetValue(chromedp.CSS("#signatureKeys"), key.ID()),
		chromedp.Click(chromedp.CSS("#save-project")))
	shop := &v1alpha1.AppProject{}
	eventually.String(t, "the project saved", func() string {
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "shop"}, shop); err != nil {
			return err.Error()
		}
		sp := shop.Spec
		if sp.Description != "The shop's apps" || len(sp.SourceRepos) != 1 || len(sp.Destinations) != 2 || sp.Destinations[1].Name != "other" ||
			len(sp.ClusterResourceWhitelist) != 1 || sp.ClusterResourceWhitelist[0].Kind != "Namespace" || len(sp.NamespaceResourceBlacklist) != 2 ||
			sp.NamespaceResourceBlacklist[1].Group != "networking.k8s.io" || sp.OrphanedResources == nil || sp.OrphanedResources.Warn == nil || !*sp.OrphanedResources.Warn ||
			len(sp.SignatureKeys) != 1 || sp.SignatureKeys[0].KeyID != key.ID() {
			return fmt.Sprintf("%+v", sp)
		}
		return ""
	})
	p.Until("the page drawn again", drawn+` !== '`+before+`'`, 10*time.Second)
	p.Do("a sync window", chromedp.Click(chromedp.CSS("#project-tab-windows")), chromedp.WaitVisible(chromedp.CSS("#window-form")),
		chromedp.SetValue(chromedp.CSS("#windowKind"), "deny"), chromedp.SendKeys(chromedp.CSS("#windowSchedule"), "0 22 * * *"),
		chromedp.SendKeys(chromedp.CSS("#windowDuration"), "1h"), chromedp.SetValue(chromedp.CSS("#windowApps"), "web"), chromedp.Click(chromedp.CSS("#add-window")))
	p.Until("the window listed", `!!document.querySelector('#sync-windows tr.window') && document.querySelector('#sync-windows').innerText.includes('0 22 * * *')`, 10*time.Second)
	p.Screenshot("project")
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "shop"}, shop); err != nil || len(shop.Spec.SyncWindows) != 1 ||
		shop.Spec.SyncWindows[0].Kind != "deny" || shop.Spec.SyncWindows[0].Applications[0] != "web" || len(shop.Spec.Destinations) != 2 {
		t.Errorf("the project's windows: %v %+v, destinations %+v", err, shop.Spec.SyncWindows, shop.Spec.Destinations)
	}
	p.Do("its events", chromedp.Click(chromedp.CSS("#project-tab-events")))
	p.Until("its events", `!!document.querySelector('#project-events')`, 10*time.Second)
	p.Do("deleting it", chromedp.Click(chromedp.CSS("#delete-project")), chromedp.WaitVisible(chromedp.CSS("dialog[open]")), chromedp.Click(chromedp.CSS("#dialog-ok")))
	p.Until("the list without it", `location.pathname.endsWith('/settings/projects') && !!document.querySelector('#projects') && !document.querySelector('#projects a[data-project="shop"]')`, 10*time.Second)

	p.Do("the help", chromedp.Click(chromedp.CSS("#nav-help")))
	p.Until("the CLI's login and download", `(document.querySelector('#cli-login') || {innerText: ''}).innerText.startsWith('argocd login ') &&
		!!document.querySelector('#cli-downloads a[href="https://downloads.example.com/argocd-linux-amd64"]')`, 10*time.Second)

	// The user info page changes the admin's password (last: the change
	// ends the session).
	p.Do("the user info", chromedp.Click(chromedp.CSS("#nav-user")), chromedp.WaitVisible(chromedp.CSS("#password-form")))
	p.Until("who is logged in", `document.querySelector('#user-info').innerText.includes('admin')`, 10*time.Second)
	p.Do("a new password", chromedp.SendKeys(chromedp.CSS("#currentPassword"), f.initialPassword()),
		chromedp.SendKeys(chromedp.CSS("#newPassword"), "a-new-password-1"), chromedp.SendKeys(chromedp.CSS("#confirmPassword"), "a-new-password-1"),
		chromedp.Click(chromedp.CSS("#password-submit")))
	p.Until("updated", `document.querySelector('#password-result').innerText === 'Password updated.'`, 10*time.Second)
	if code := f.call("POST", "/api/v1/session", `{"username":"admin","password":"a-new-password-1"}`, "", nil); code != http.StatusOK {
		t.Errorf("logging in with the new password: %d", code)
	}
	// Sessions from before the change end, as in Argo CD.
	p.Do("another page", chromedp.Navigate(f.base+"/applications"))
	p.Login("admin", "a-new-password-1")
	p.Until("in again with the new password", `location.pathname === '/applications' && !!document.querySelector('#apps')`, 10*time.Second)
}

// trustData is a TLS certificate (PEM) for git.example.com and a
// known_hosts line for ssh.example.com.
func trustData(t *testing.T) (string, string) {
	t.Helper()
	cert, _, err := certs.SelfSigned("git.example.com", []string{"git.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return string(cert), hostkey.Line(t, "ssh.example.com")
}
