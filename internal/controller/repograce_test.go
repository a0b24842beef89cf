package controller

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"log/slog"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/faultproxy"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/logbuf"
)

func TestRepoGraceHides(t *testing.T) {
	fine := &v1alpha1.Application{Status: v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced}}}
	unknown := &v1alpha1.Application{Status: v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeUnknown}}}
	failing := fine.DeepCopy()
	failing.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: v1alpha1.ApplicationConditionComparisonError}}
	syncing := fine.DeepCopy()
	syncing.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
	t0 := time.Now()
	for _, tc := range []struct {
		name         string
		period       time.Duration
		app          *v1alpha1.Application
		renderFailed bool
		at           time.Duration
		want         bool
	}{
		{"first failure", time.Minute, fine, true, 0, true},
		{"within the period", time.Minute, fine, true, 30 * time.Second, true},
		{"past the period", time.Minute, fine, true, 2 * time.Minute, false},
		{"no period", 0, fine, true, 0, false},
		{"nothing compared yet", time.Minute, unknown, true, 0, false},
		{"an error already shown", time.Minute, failing, true, 0, false},
		{"an operation asked for", time.Minute, syncing, true, 0, false},
		{"another failure", time.Minute, fine, false, 0, false},
	} {
		g := &repoGrace{period: tc.period}
		if tc.at > 0 {
			g.hide("app", fine, true, t0) // first seen at t0
		}
		if got := g.hide("app", tc.app, tc.renderFailed, t0.Add(tc.at)); got != tc.want {
			t.Errorf("%s: hidden %t, want %t", tc.name, got, tc.want)
		}
	}
	// A success starts the period again.
	g := &repoGrace{period: time.Minute}
	g.hide("app", fine, true, t0)
	g.hide("app", fine, false, t0.Add(time.Second))
	if !g.hide("app", fine, true, t0.Add(2*time.Minute)) {
		t.Error("a failure after a success counted from the earlier one")
	}
}

// TestRepoErrorGracePeriod: an Application that compared fine keeps its
// comparison while its Git server is away, the failed reconciles logged;
// a refresh shows the error at once, and the comparison comes back with
// the server.
func TestRepoErrorGracePeriod(t *testing.T) {
	localcluster.Need(t)
	srv := gitserver.NewWith(t, gitserver.Options{Authorize: func(*http.Request) bool { return true }})
	remote := srv.NewRepo(t, "apps")
	remote.Commit(t, "c1", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: graced}\ndata: {a: b}\n"})
	proxy := faultproxy.New(t, strings.TrimPrefix(srv.URL, "http://"))
	repoURL := "http://" + proxy.Addr + "/apps.git"

	logs := &logbuf.Buffer{}
	_, ns := controlNamespace(t)
	e := startWith(t, ns, func(o *Options) {
		o.RepoErrorGracePeriod = time.Hour
		o.Log = slog.New(slog.NewJSONHandler(logs, nil))
	})
	ctx := context.Background()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "graced", Namespace: e.ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: e.ns}},
	}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.eventually("a comparison", func() string {
		if s := e.app("graced").Status.Sync.Status; s != v1alpha1.SyncStatusCodeOutOfSync {
			return "sync status " + string(s)
		}
		return ""
	})

	proxy.Down()
	e.eventually("two hidden failures", func() string {
		if n := strings.Count(logs.String(), "Ignoring temporary failed attempt"); n < 2 {
			a := e.app("graced")
			return fmt.Sprintf("seen %d; status %s %+v", n, a.Status.Sync.Status, a.Status.Conditions)
		}
		return ""
	})
	if a := e.app("graced"); a.Status.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync || len(a.Status.Conditions) > 0 {
		t.Fatalf("within the grace period: %s %+v", a.Status.Sync.Status, a.Status.Conditions)
	}

	e.update("graced", func(a *v1alpha1.Application) {
		metav1.SetMetaDataAnnotation(&a.ObjectMeta, v1alpha1.AnnotationRefresh, "normal")
	})
	e.eventually("the error, shown by a refresh", func() string {
		for _, c := range e.app("graced").Status.Conditions {
			if c.Type == v1alpha1.ApplicationConditionComparisonError {
				return ""
			}
		}
		return "no ComparisonError"
	})

	proxy.Up()
	e.eventually("the comparison back", func() string {
		a := e.app("graced")
		if a.Status.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync || len(a.Status.Conditions) > 0 {
			return fmt.Sprintf("sync status %s, %d conditions", a.Status.Sync.Status, len(a.Status.Conditions))
		}
		return ""
	})
}
