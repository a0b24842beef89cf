package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestTerminalRefusals: Argo CD's web terminal is not there without
// exec.enabled, is refused to a user without (exec, create), to another
// site's page and for a pod outside the Application; parameters are
// checked. (A shell through it runs in internal/server/ui's
// TestUIWithController, on a cluster whose pods run.)
func TestTerminalRefusals(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	f := start(t, true)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "shell", Namespace: f.ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"},
			Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git"}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	admin := f.adminToken()
	query := url.Values{"pod": {"web-1"}, "container": {"web"}, "appName": {"shell"}, "projectName": {"default"}, "namespace": {"x"}}
	open := func(token string, q url.Values, origin string) int {
		t.Helper()
		h := http.Header{"Authorization": {"Bearer " + token}}
		if origin != "" {
			h.Set("Origin", origin)
		}
		conn, resp, err := websocket.DefaultDialer.Dial(strings.Replace(f.base, "http", "ws", 1)+"/terminal?"+q.Encode(), h)
		if err != nil {
			if resp == nil {
				t.Fatal(err)
			}
			return resp.StatusCode
		}
		conn.Close()
		return http.StatusSwitchingProtocols
	}
	with := func(key, value string) url.Values {
		q := url.Values{}
		for k, v := range query {
			q[k] = v
		}
		q.Set(key, value)
		return q
	}
	if code := open(admin, query, ""); code != http.StatusNotFound {
		t.Fatalf("without exec.enabled: %d, want 404", code)
	}
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"exec.enabled": "true", "accounts.viewer": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns},
		Data: map[string]string{"policy.csv": "g, viewer, role:readonly\n"}}); err != nil {
		t.Fatal(err)
	}
	for what, tc := range map[string]struct {
		token string
		q     url.Values
		want  int
	}{
		"a read-only user":           {f.apiKey("viewer"), query, http.StatusForbidden},
		"a pod outside the app":      {admin, query, http.StatusBadRequest},
		"no container":               {admin, with("container", ""), http.StatusBadRequest},
		"a pod name that is no name": {admin, with("pod", "../etc"), http.StatusBadRequest},
		"the wrong project":          {admin, with("projectName", "other"), http.StatusBadRequest},
	} {
		if code := open(tc.token, tc.q, ""); code != tc.want {
			t.Errorf("%s: %d, want %d", what, code, tc.want)
		}
	}
	if f.srv.sameOrigin(&http.Request{Host: "cd.example.com", Header: http.Header{"Origin": {"https://evil.example.com"}}}) {
		t.Error("a page of another site may open a terminal")
	}
	if !f.srv.sameOrigin(&http.Request{Host: "cd.example.com", Header: http.Header{"Origin": {"https://cd.example.com"}}}) {
		t.Error("the API server's own page may not open a terminal")
	}
}

// TestSyncReplaceDisallowed: with server.sync.replace.allowed "false" a sync
// asking for Replace=true is refused with Argo CD's message; others pass.
func TestSyncReplaceDisallowed(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	f := startWith(t, Options{Insecure: true, DisableSyncReplace: true})
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "replaced", Namespace: f.ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"},
			Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git"}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	admin := f.adminToken()
	var refused map[string]any
	if code := f.call("POST", "/api/v1/applications/replaced/sync", `{"syncOptions":{"items":["Replace=true"]}}`, admin, &refused); code != http.StatusBadRequest ||
		!strings.Contains(refused["message"].(string), "sync with replace was disabled on the API Server level") {
		t.Errorf("a sync with Replace=true: %d %v", code, refused)
	}
	if code := f.call("POST", "/api/v1/applications/replaced/sync", `{"syncOptions":{"items":["Prune=true"]}}`, admin, nil); code != http.StatusOK {
		t.Errorf("a sync without Replace: %d", code)
	}
}

// TestTerminalSessionEnds is a finding of the tenant review: an open
// terminal ends when its API key is revoked, when its session expires and
// when the policy no longer allows exec.
func TestTerminalSessionEnds(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	defer func(d time.Duration) { terminalRecheck = d }(terminalRecheck)
	terminalRecheck = 50 * time.Millisecond
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.ops": "apiKey", "accounts.ops2": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	rbacCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns},
		Data: map[string]string{"policy.csv": "p, ops, exec, create, default/*, allow\np, ops2, exec, create, default/*, allow\n"}}
	if err := testobj.Put(ctx, f.c, rbacCM); err != nil {
		t.Fatal(err)
	}
	watch := func(token string) <-chan string {
		r, _ := http.NewRequestWithContext(ctx, "GET", "/terminal", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		wctx, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		return f.srv.watchSession(wctx, r, "exec", "create", "default/shell")
	}
	ended := func(what string, ch <-chan string, want string) {
		t.Helper()
		select {
		case why := <-ch:
			if !strings.Contains(why, want) {
				t.Errorf("%s: ended with %q, want %q", what, why, want)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the terminal stayed open", what)
		}
	}

	revoked := watch(f.apiKey("ops"))
	select {
	case why := <-revoked:
		t.Fatalf("a valid session ended: %s", why)
	case <-time.After(200 * time.Millisecond):
	}
	if err := settings.RemoveToken(ctx, f.c, f.ns, "ops", "ops-key"); err != nil {
		t.Fatal(err)
	}
	ended("revoked API key", revoked, "no longer valid")

	short, err := f.srv.sessions.Create("admin", time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	ended("expired session", watch(short), "expired")

	withdrawn := watch(f.apiKey("ops2"))
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns},
		Data: map[string]string{"policy.csv": "p, ops, exec, create, default/*, allow\n"}}); err != nil {
		t.Fatal(err)
	}
	ended("policy changed", withdrawn, "withdrawn")
}

// TestTerminalShells: exec.shells are the shells a terminal may start,
// tried in turn (Argo CD's default list without it); a shell asked for is
// the only one tried when the list has it, and ignored when it does not.
func TestTerminalShells(t *testing.T) {
	for _, tc := range []struct {
		shells, asked, want string
	}{
		{"", "", "bash,sh,powershell,cmd"},
		{"", "sh", "sh"},
		{"zsh, ash", "", "zsh,ash"},
		{"zsh, ash", "ash", "ash"},
		{"zsh, ash", "bash", "zsh,ash"},
		{"zsh", "/bin/rm", "zsh"},
	} {
		cm := &settings.ArgoCD{Data: map[string]string{}}
		if tc.shells != "" {
			cm.Data["exec.shells"] = tc.shells
		}
		if got := strings.Join(terminalShells(cm.ExecShells(), tc.asked), ","); got != tc.want {
			t.Errorf("exec.shells %q, asked %q: %s, want %s", tc.shells, tc.asked, got, tc.want)
		}
	}
}
