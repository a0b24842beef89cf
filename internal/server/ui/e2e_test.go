package ui_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/controller"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/server"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/browser"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var cluster *localcluster.Cluster

// Deployments become Available and Pods log (kwok), so the UI shows what
// a user sees.
func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{Workloads: true}, &cluster))
}

// TestUIWithController drives the UI in Chromium against an API server and
// an application controller syncing the guestbook demo: sync through the
// dialog until Synced and Healthy on screen; the tree down to the Pods; a
// change made in the cluster (a Deployment, then a ConfigMap) turning the
// app OutOfSync on screen without a reload and shown in the diff; a Pod's
// logs; a new commit synced and rolled back from the history.
func TestUIWithController(t *testing.T) {
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
	ns, dest := cluster.NewNamespace(t), cluster.NewNamespace(t)
	git := gitserver.NewLocalRepo(t)
	files := map[string]string{}
	for _, f := range []string{"guestbook-ui-deployment.yaml", "guestbook-ui-svc.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "guestbook", f))
		if err != nil {
			t.Fatal(err)
		}
		files["guestbook/"+f] = string(data)
	}
	files["guestbook/guestbook-config.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: guestbook-config}\ndata: {greeting: hello}\n"
	first := git.Commit(t, "guestbook", files)

	// The web terminal is on (argocd-cm is read before the page loads).
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: ns},
		Data: map[string]string{"exec.enabled": "true"}}); err != nil {
		t.Fatal(err)
	}
	renderer := repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second})
	srv, err := server.New(ctx, server.Options{Client: c, Config: cluster.Config, Namespace: ns, Renderer: renderer, Insecure: true,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ctx, l) }()
	go func() {
		_ = controller.Run(ctx, controller.Options{Config: cluster.Config, Namespace: ns, Renderer: renderer, Resync: time.Hour, RepoPoll: time.Second,
			Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	}()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: git.URL, Path: "guestbook", TargetRevision: "HEAD"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}}}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	initial := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: settings.InitialAdminSecretName}, initial); err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	status := `(document.querySelector('#app-status') ? document.querySelector('#app-status').innerText : '')`

	p := browser.Open(t, 10*time.Minute) // the whole walk; under -race beside other packages it has taken 5
	p.Do("opening the app", chromedp.Navigate(base+"/applications/"+ns+"/guestbook"))
	p.Login("admin", string(initial.Data["password"]))
	p.Until("the app compared", status+`.includes('OutOfSync')`, time.Minute)

	sync := func(what string) {
		t.Helper()
		p.Do(what, chromedp.Click(chromedp.CSS("#sync")), chromedp.WaitVisible(chromedp.CSS("dialog[open]")),
			chromedp.Click(chromedp.CSS("#dialog-ok")))
		p.Until(what+": Synced and Healthy on screen", status+`.includes('Synced') && `+status+`.includes('Healthy') && !`+status+`.includes('OutOfSync')`, 2*time.Minute)
	}
	sync("the first sync")
	p.Until("the tree down to the Pods",
		`!!document.querySelector('#tree li[data-kind="Deployment"] li[data-kind="ReplicaSet"] li[data-kind="Pod"]')`, time.Minute)
	p.Screenshot("app-graph")

	// The tree's filters: Pods only keeps the way to them, dimmed, and
	// hides the rest; clearing shows all again.
	p.Eval(`(() => { const s = document.querySelector('#tree-kinds'); [...s.options].forEach((o) => { o.selected = o.value === 'Pod'; });
		s.dispatchEvent(new Event('change')); return ''; })()`)
	p.Until("only the way to the Pods", `document.querySelector('#tree li[data-kind="ConfigMap"]').hidden &&
		document.querySelector('#tree li[data-kind="Deployment"]').classList.contains('dim') &&
		!document.querySelector('#tree li[data-kind="Pod"]').hidden && document.querySelector('#tree li[data-kind="Pod"]').classList.contains('match')`, 10*time.Second)
	p.Do("clearing the filters", chromedp.Click(chromedp.CSS("#tree-clear")))
	p.Until("everything shown again", `!document.querySelector('#tree li[data-kind="ConfigMap"]').hidden`, 10*time.Second)

	// The network view: the Service and the Pods its selector picks; the
	// pods view: the Pods by the node they run on, with the node's
	// capacity.
	p.Do("the network view", chromedp.Click(chromedp.CSS("#view-network")))
	p.Until("Service → Pod", `!!document.querySelector('#network li[data-kind="Service"][data-name="guestbook-ui"] li[data-kind="Pod"]') && location.search.includes('view=network')`, 10*time.Second)
	p.Screenshot("app-network")
	p.Do("the pods view", chromedp.Click(chromedp.CSS("#view-pods")))
	p.Until("Pods by node", `document.querySelectorAll('#pods .pod-group .pod').length > 0 && !!document.querySelector('#pods .pod-group .usage[data-resource="cpu"]')`, 10*time.Second)
	p.Screenshot("app-pods")
	p.Do("the pods by parent", chromedp.SetValue(chromedp.CSS("#pods-by"), "parentResource"))
	p.Eval(`(document.querySelector('#pods-by').dispatchEvent(new Event('change')), '')`)
	p.Until("Pods by their ReplicaSet", `[...document.querySelectorAll('#pods .pod-group')].some((g) => g.dataset.group.startsWith('ReplicaSet guestbook-ui-'))`, 10*time.Second)
	p.Do("the list view", chromedp.Click(chromedp.CSS("#view-list")))
	p.Until("the list", `!!document.querySelector('#resources tr[data-kind="Deployment"]')`, 10*time.Second)

	// A change in the cluster shows without a reload, and in the diff.
	p.Eval(`window.notReloaded = 'yes'`)
	changed := time.Now()
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: dest, Name: "guestbook-ui"}}
	if err := c.Patch(ctx, dep, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`))); err != nil {
		t.Fatal(err)
	}
	p.Until("OutOfSync on screen", status+`.includes('OutOfSync')`, time.Minute)
	t.Logf("OutOfSync on screen %s after the change", time.Since(changed).Round(10*time.Millisecond))
	if p.Eval(`window.notReloaded || ''`) != "yes" {
		t.Error("the page was reloaded")
	}
	p.Do("opening the Deployment's diff", chromedp.Click(chromedp.CSS(`#resources tr[data-kind="Deployment"] button`)))
	p.Until("the diff", `!!document.querySelector('#diff.changed')`, 30*time.Second)
	if got := p.Eval(`document.querySelector('#diff').innerText`); !regexp.MustCompile(`(?m)^-\s+"replicas": 3`).MatchString(got) || !regexp.MustCompile(`(?m)^\+\s+"replicas": 2`).MatchString(got) {
		t.Errorf("the diff does not show the replicas changed:\n%s", got)
	}
	p.Eval(`(document.querySelector("#panel").scrollIntoView(), "")`)
	p.Screenshot("diff")
	// The app's whole diff shows the Deployment, and its events the sync.
	p.Do("the app's diff", chromedp.Click(chromedp.CSS("#details-diff")))
	p.Until("the Deployment in it", `!!document.querySelector('#app-diff .resource-diff[data-kind="Deployment"] .diff.changed') &&
		!document.querySelector('#app-diff .resource-diff[data-kind="ConfigMap"]')`, 30*time.Second)
	p.Do("the app's events", chromedp.Click(chromedp.CSS("#details-events")))
	p.Until("the sync among them", `!!document.querySelector('#app-events') && document.querySelector('#app-events').innerText.includes('OperationCompleted')`, 30*time.Second)
	p.Do("back to the summary", chromedp.Click(chromedp.CSS("#details-summary")))
	sync("the sync undoing the change")

	// A ConfigMap changed in the cluster: the app and the resource turn
	// OutOfSync on screen.
	changed = time.Now()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dest, Name: "guestbook-config"}}
	if err := c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, []byte(`{"data":{"greeting":"changed"}}`))); err != nil {
		t.Fatal(err)
	}
	p.Until("the ConfigMap OutOfSync on screen", status+`.includes('OutOfSync') && (document.querySelector('#resources tr[data-kind="ConfigMap"]') || {innerText: ''}).innerText.includes('OutOfSync')`, time.Minute)
	t.Logf("the ConfigMap OutOfSync on screen %s after the change", time.Since(changed).Round(10*time.Millisecond))
	sync("the sync undoing the ConfigMap change")

	// A Pod's logs.
	p.Do("opening a Pod", chromedp.Click(chromedp.CSS("#view-tree")), chromedp.Click(chromedp.CSS(`#tree li[data-kind="Pod"] button`)))
	p.Do("its logs", chromedp.Click(chromedp.CSS("#tab-logs")))
	p.Until("the Pod's logs", `document.querySelector('#logs') && document.querySelector('#logs').innerText.includes('`+localcluster.PodLogLines[1]+`')`, 30*time.Second)
	// A shell in the Pod's container through the web terminal (the fake
	// node runs it on this machine).
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(dest)); err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods.Items {
		if err := cluster.AllowExec(ctx, dest, pod.Name, t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	p.Until("its terminal's tab", `!!document.querySelector('#tab-terminal')`, 10*time.Second)
	p.Do("its terminal", chromedp.Click(chromedp.CSS("#tab-terminal")), chromedp.WaitVisible(chromedp.CSS("#terminal-output")))
	p.Until("the terminal connected", `!!document.querySelector('#terminal-output[data-state="open"]')`, 30*time.Second)
	p.Do("typing a command", chromedp.SendKeys(chromedp.CSS("#terminal-output"), "echo capstan-$((40 + 2))"+kb.Enter))
	p.Until("the command's output", `document.querySelector('#terminal-output').innerText.includes('capstan-42')`, 30*time.Second)
	// A live update of the app draws its page again around the panel: the
	// terminal's session goes on.
	drawn := `String(performance.getEntriesByName('capstan:app').length)`
	before := p.Eval(drawn)
	touched := &v1alpha1.Application{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(app), touched); err != nil {
		t.Fatal(err)
	}
	touched.Annotations = map[string]string{"example.com/touched": "yes"}
	if err := c.Update(ctx, touched); err != nil {
		t.Fatal(err)
	}
	p.Until("the page drawn again", drawn+` !== '`+before+`'`, 10*time.Second)
	if got := p.Eval(`[document.querySelector('#terminal-output').dataset.state, document.querySelector('#terminal-output').innerText.includes('capstan-42')].join()`); got != "open,true" {
		t.Errorf("the terminal after a live update: %s, want open,true", got)
	}
	// A real terminal: the screen cleared by the shell's escape sequence.
	p.Do("clearing the screen", chromedp.SendKeys(chromedp.CSS("#terminal-output"), "PS1='$ '; printf '\\033[2J\\033[Hcleared-%s\\n' ok"+kb.Enter))
	p.Until("the screen cleared", `document.querySelector('#terminal-output').innerText.includes('cleared-ok') && !document.querySelector('#terminal-output').innerText.includes('capstan-42')`, 30*time.Second)
	p.Do("a command for the picture", chromedp.SendKeys(chromedp.CSS("#terminal-output"), "echo capstan-$((40 + 2))"+kb.Enter))
	p.Until("its output", `document.querySelector('#terminal-output').innerText.includes('capstan-42')`, 30*time.Second)
	p.Eval(`(document.querySelector('#panel').scrollIntoView({ block: 'end' }), '')`)
	p.Screenshot("terminal")
	p.Do("closing the panel", chromedp.Click(chromedp.CSS("#close-panel")))
	if n := p.Eval(`String(document.querySelectorAll('#operation-resources tr.op-resource').length)`); n != "3" {
		t.Errorf("the last operation lists %s resources, want 3", n)
	}

	// The Deployment: its events, and the restart action.
	p.Do("opening the Deployment", chromedp.Click(chromedp.CSS("#view-list")),
		chromedp.Click(chromedp.CSS(`#resources tr[data-kind="Deployment"] button`)), chromedp.WaitVisible(chromedp.CSS("#tab-events")),
		chromedp.Click(chromedp.CSS("#tab-events")))
	p.Until("the Deployment's events", `document.querySelectorAll('#events tr.event').length > 0 && document.querySelector('#events').innerText.includes('ScalingReplicaSet')`, 30*time.Second)
	// The logs of all its Pods, each line with its Pod, and with times.
	p.Do("its Pods' logs", chromedp.Click(chromedp.CSS("#tab-logs")))
	p.Until("lines of its Pods", `document.querySelector('#logs') && document.querySelector('#logs').innerText.split('\n').some((l) => l.startsWith('guestbook-ui-') && l.includes('`+localcluster.PodLogLines[1]+`'))`, 30*time.Second)
	p.Do("with timestamps", chromedp.Click(chromedp.CSS("#logs-timestamps")))
	p.Until("lines with their time", `document.querySelector('#logs') && /^guestbook-ui-\S+ 20\d\d-/m.test(document.querySelector('#logs').innerText)`, 30*time.Second)
	p.Do("the events again", chromedp.Click(chromedp.CSS("#tab-events")))
	p.Do("restarting it", chromedp.Click(chromedp.CSS("#resource-actions")), chromedp.WaitVisible(chromedp.CSS("dialog[open]")),
		chromedp.Click(chromedp.CSS("#action-restart")), chromedp.Click(chromedp.CSS("#dialog-ok")))
	eventually.String(t, "the restart action reaching the Deployment", func() string {
		restarted := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "guestbook-ui"}, restarted); err != nil {
			t.Fatal(err)
		}
		if restarted.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
			return "no restartedAt annotation"
		}
		return ""
	})
	// Scale, an action of Argo CD's library with a parameter.
	p.Do("scaling it to 1", chromedp.Click(chromedp.CSS("#resource-actions")), chromedp.WaitVisible(chromedp.CSS("dialog[open] #action-param-scale-replicas")),
		chromedp.Click(chromedp.CSS("#action-scale")), chromedp.SendKeys(chromedp.CSS("#action-param-scale-replicas"), "1"),
		chromedp.Click(chromedp.CSS("#dialog-ok")))
	eventually.String(t, "the scale action reaching the Deployment", func() string {
		scaled := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "guestbook-ui"}, scaled); err != nil {
			t.Fatal(err)
		}
		if r := scaled.Spec.Replicas; r != nil && *r != 1 {
			return fmt.Sprintf("replicas %d", *r)
		}
		return ""
	})
	p.Do("closing the panel", chromedp.Click(chromedp.CSS("#close-panel")))

	// A new commit, synced, then rolled back to the first from the history.
	files["guestbook/guestbook-ui-svc.yaml"] = strings.Replace(files["guestbook/guestbook-ui-svc.yaml"], "port: 80", "port: 81", 1)
	second := git.Commit(t, "port 81", files)
	p.Do("refreshing", chromedp.Click(chromedp.CSS("#hard-refresh")))
	p.Until("the new commit seen", status+`.includes('OutOfSync')`, time.Minute)
	sync("the sync of the new commit")
	p.Until("the new commit in the history", `document.querySelectorAll('#history tr.history').length >= 2 && document.querySelector('#history tr.history').innerText.includes('`+second[:7]+`')`, 30*time.Second)
	p.Do("rolling back", chromedp.Click(chromedp.CSS(`#history tr.history[data-id="0"] .rollback`)), chromedp.WaitVisible(chromedp.CSS("dialog[open]")),
		chromedp.Click(chromedp.CSS("#dialog-ok")))
	eventually.Within(t, eventually.Options{Timeout: 2 * time.Minute, Interval: 200 * time.Millisecond}, "rolled back to "+first+" (second "+second+")", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			t.Fatal(err)
		}
		h := app.Status.History
		if len(h) > 0 && h[len(h)-1].Revision == first && app.Status.OperationState != nil && app.Status.OperationState.Phase == "Succeeded" {
			return ""
		}
		return fmt.Sprintf("history %+v", h)
	})
	live := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "guestbook-ui"}, live); err != nil || live.Spec.Ports[0].Port != 80 {
		t.Errorf("after the rollback the Service's port is %v (%v), want 80", live.Spec.Ports, err)
	}
}
