package server

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// appSetEvent is one message of the ApplicationSet stream, in Argo CD's
// shape.
type appSetEvent struct {
	Type           watch.EventType          `json:"type"`
	ApplicationSet *v1alpha1.ApplicationSet `json:"applicationSet"`
}

// TestApplicationSetWatchAndEvents: the ApplicationSet stream sends the
// sets a caller may get as they are, then their changes and deletion,
// and never one of a project the caller may not see; the events of a set
// are its Kubernetes Events.
func TestApplicationSetWatchAndEvents(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.viewer": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns},
		Data: map[string]string{"policy.csv": "p, viewer, applicationsets, get, default/*, allow"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Create(ctx, &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "secret-team", Namespace: f.ns}}); err != nil {
		t.Fatal(err)
	}
	set := func(name, project string) *v1alpha1.ApplicationSet {
		return &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
			Spec: v1alpha1.ApplicationSetSpec{Generators: []v1alpha1.ApplicationSetGenerator{},
				Template: v1alpha1.ApplicationSetTemplate{Spec: v1alpha1.ApplicationSpec{Project: project}}}}
	}
	web := set("web", "default")
	for _, as := range []*v1alpha1.ApplicationSet{web, set("hidden", "secret-team")} {
		if err := f.c.Create(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	viewer := f.apiKey("viewer")
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan appSetEvent, 16)
	go eachResult(f.openStream(t, sctx, "/api/v1/stream/applicationsets", viewer).Body, func(ev appSetEvent) { events <- ev })
	next := func(want watch.EventType) *v1alpha1.ApplicationSet {
		t.Helper()
		select {
		case ev := <-events:
			if ev.Type != want || ev.ApplicationSet == nil || ev.ApplicationSet.Name != "web" {
				t.Fatalf("event %s of %v, want %s of web", ev.Type, ev.ApplicationSet, want)
			}
			return ev.ApplicationSet
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s event", want)
		}
		return nil
	}
	next(watch.Added)
	web.Labels = map[string]string{"tier": "front"}
	if err := f.c.Update(ctx, web); err != nil {
		t.Fatal(err)
	}
	if got := next(watch.Modified); got.Labels["tier"] != "front" {
		t.Errorf("modified set labels %v", got.Labels)
	}
	if err := f.c.Delete(ctx, web); err != nil {
		t.Fatal(err)
	}
	next(watch.Deleted)

	events2 := set("evented", "default")
	if err := f.c.Create(ctx, events2); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "evented.1", Namespace: f.ns},
		InvolvedObject: corev1.ObjectReference{Kind: "ApplicationSet", Name: "evented", Namespace: f.ns, UID: events2.UID},
		Reason:         "ApplicationSetUpdated", Message: "created Application x"}); err != nil {
		t.Fatal(err)
	}
	var list corev1.EventList
	eventually.True(t, "the ApplicationSet's event", func() bool {
		return f.call("GET", "/api/v1/applicationsets/evented/events", "", viewer, &list) == 200 && len(list.Items) == 1
	})
	if code := f.call("GET", "/api/v1/applicationsets/hidden/events", "", viewer, nil); code != 403 {
		t.Errorf("events of a set the viewer may not get: %d, want 403", code)
	}
}
