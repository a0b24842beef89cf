package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/session"
)

// listedApps answers List with its Applications as the informer cache
// does without deep copies: the items copied shallowly.
type listedApps struct {
	client.Client
	items []v1alpha1.Application
}

func (l listedApps) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	list.(*v1alpha1.ApplicationList).Items = append([]v1alpha1.Application(nil), l.items...)
	return nil
}

// BenchmarkUIApplications is one page of the web UI's list over 10,000
// Applications, each checked against RBAC, filtered, counted and sorted,
// read as from the informer cache: what a user waits for on every filter
// change or live update at that scale, where Argo CD's UI downloads every
// Application.
//
//	go test ./internal/server -run '^$' -bench UIApplications
func BenchmarkUIApplications(b *testing.B) {
	const apps = 10000
	objs := make([]v1alpha1.Application, 0, apps)
	for i := range apps {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%05d", i), Namespace: "argocd"},
			Spec: v1alpha1.ApplicationSpec{Project: fmt.Sprintf("team-%d", i%20),
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: fmt.Sprintf("apps/%05d", i)},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: fmt.Sprintf("ns-%d", i%50)}},
			Status: v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced}, Health: v1alpha1.AppHealthStatus{Status: v1alpha1.HealthStatusHealthy}}}
		if i%10 == 0 {
			app.Status.Sync.Status = v1alpha1.SyncStatusCodeOutOfSync
		}
		objs = append(objs, *app)
	}
	s := &Server{opts: Options{Client: listedApps{items: objs}, Namespace: "argocd"}}
	e, err := rbac.New(rbac.Policy{Default: "role:readonly"})
	if err != nil {
		b.Fatal(err)
	}
	c := &caller{claims: &session.Claims{}, subjects: []string{"someone"}, enforcer: e}
	for _, query := range []string{"", "?sync=OutOfSync&project=team-3", "?search=app-099"} {
		b.Run("query="+query, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.uiApplications(httptest.NewRequest("GET", "/api/v1/ui/applications"+query, nil), c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
