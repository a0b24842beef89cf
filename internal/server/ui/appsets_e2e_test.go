package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/server"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/browser"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestUIApplicationSets drives the ApplicationSet pages in Chromium
// against an API server and the ApplicationSet controller with
// progressive syncs: the list shows each set's generators, state and
// Applications, a failing set its error; a set's page shows its
// conditions, its RollingSync steps and each Application's rollout state,
// and follows changes without a reload.
func TestUIApplicationSets(t *testing.T) {
	localcluster.Need(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := kube.InstallCRDs(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.NewNamespace(t)
	discard := slog.New(slog.NewJSONHandler(io.Discard, nil))
	renderer := repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second})
	srv, err := server.New(ctx, server.Options{Client: c, Config: cluster.Config, Namespace: ns, Renderer: renderer, Insecure: true, Log: discard})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ctx, l) }()
	go func() {
		_ = applicationset.Run(ctx, applicationset.Options{Config: cluster.Config, Namespace: ns, Git: renderer, ProgressiveSyncs: true, Log: discard})
	}()
	step := func(env string) v1alpha1.ApplicationSetRolloutStep {
		return v1alpha1.ApplicationSetRolloutStep{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "In", Values: []string{env}}}}
	}
	element := func(env string) apiextensionsv1.JSON {
		data, _ := json.Marshal(map[string]string{"env": env})
		return apiextensionsv1.JSON{Raw: data}
	}
	template := v1alpha1.ApplicationSetTemplate{
		ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "web-{{env}}", Labels: map[string]string{"env": "{{env}}"}},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example/web.git", Path: "{{env}}"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web-{{env}}"}},
	}
	for _, as := range []*v1alpha1.ApplicationSet{
		{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: v1alpha1.ApplicationSetSpec{
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
				List: &v1alpha1.ListGenerator{Elements: []apiextensionsv1.JSON{element("dev"), element("prod")}}}}},
			Strategy: &v1alpha1.ApplicationSetStrategy{Type: "RollingSync", RollingSync: &v1alpha1.ApplicationSetRolloutStrategy{
				Steps: []v1alpha1.ApplicationSetRolloutStep{step("dev"), step("prod")}}},
			Template: template}},
		{ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: ns}, Spec: v1alpha1.ApplicationSetSpec{
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
				Plugin: &v1alpha1.PluginGenerator{ConfigMapRef: v1alpha1.PluginConfigMapRef{Name: "no-such-plugin"}}}}},
			Template: template}},
	} {
		if err := c.Create(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	initial := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: settings.InitialAdminSecretName}, initial); err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	text := func(sel string) string {
		return `(document.querySelector('` + sel + `') ? document.querySelector('` + sel + `').innerText : '')`
	}

	p := browser.Open(t, 3*time.Minute)
	p.Do("opening the ApplicationSets", chromedp.Navigate(base+"/applicationsets"))
	p.Login("admin", string(initial.Data["password"]))
	p.Until("the list with both sets and web's Applications",
		text(`#appsets tr[data-appset="web"]`)+`.includes('web-dev') && `+text(`#appsets tr[data-appset="web"]`)+`.includes('list') && `+
			text(`#appsets tr[data-appset="broken"]`)+`.includes('Error')`, time.Minute)
	if got := p.Eval(text(`#appsets tr[data-appset="broken"]`)); !strings.Contains(got, "no-such-plugin") {
		t.Errorf("the failing set's row does not say why: %q", got)
	}
	p.Screenshot("appsets")

	p.Do("opening web", chromedp.Click(chromedp.CSS(`#appsets tr[data-appset="web"] td a`)))
	p.Until("web's page: conditions, two steps, each Application's rollout state",
		text("#appset-conditions")+`.includes('RolloutProgressing') && document.querySelectorAll('#appset-steps li.step').length === 2 && `+
			`document.querySelectorAll('#appset-app-status tr.app-status').length === 2 && document.querySelectorAll('#appset-apps tr.appset-app').length === 2`,
		time.Minute)
	if got := p.Eval(text("#appset-app-status")); !strings.Contains(got, "web-dev") || !strings.Contains(got, "Pending") || !strings.Contains(got, "Waiting") {
		t.Errorf("the rollout states: %q, want web-dev Pending and web-prod Waiting", got)
	}
	p.Screenshot("appset")

	// A label added to the set shows without a reload.
	p.Eval(`window.notReloaded = 'yes'`)
	as := &v1alpha1.ApplicationSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, as); err != nil {
		t.Fatal(err)
	}
	as.Spec.Generators[0].List.Elements = append(as.Spec.Generators[0].List.Elements, element("qa"))
	if err := c.Update(ctx, as); err != nil {
		t.Fatal(err)
	}
	p.Until("the new Application on the page", text("#appset-apps")+`.includes('web-qa')`, time.Minute)
	if p.Eval(`window.notReloaded || ''`) != "yes" {
		t.Error("the page was reloaded")
	}
}
