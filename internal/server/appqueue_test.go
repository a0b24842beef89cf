package server

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func queuedApp(name, version string) *v1alpha1.Application {
	return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd", ResourceVersion: version}}
}

func TestQueueKeepsTheLatestChangePerApplication(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		pushed []appEvent
		want   []string // type name@version, in order
	}{
		{"in order of first change", []appEvent{
			{watch.Added, queuedApp("a", "1")}, {watch.Added, queuedApp("b", "2")}, {watch.Modified, queuedApp("a", "3")},
		}, []string{"ADDED a@3", "ADDED b@2"}},
		{"modified twice", []appEvent{
			{watch.Modified, queuedApp("a", "1")}, {watch.Modified, queuedApp("a", "2")},
		}, []string{"MODIFIED a@2"}},
		{"deleted last", []appEvent{
			{watch.Modified, queuedApp("a", "1")}, {watch.Deleted, queuedApp("a", "2")},
		}, []string{"DELETED a@2"}},
		{"nothing", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := newAppQueue()
			for _, ev := range c.pushed {
				q.push(ev)
			}
			var got []string
			for ev, ok := q.pop(); ok; ev, ok = q.pop() {
				got = append(got, fmt.Sprintf("%s %s@%s", ev.typ, ev.app.Name, ev.app.ResourceVersion))
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestQueueIsBoundedByApplications(t *testing.T) {
	t.Parallel()
	q := newAppQueue()
	for i := range 10_000 {
		q.push(appEvent{watch.Modified, queuedApp(fmt.Sprintf("app-%d", i%100), fmt.Sprint(i))})
	}
	if q.len() != 100 {
		t.Fatalf("%d events wait for 100 Applications", q.len())
	}
	ev, _ := q.pop()
	if ev.app.Name != "app-0" || ev.app.ResourceVersion != "9900" {
		t.Errorf("first event %s@%s, want app-0@9900", ev.app.Name, ev.app.ResourceVersion)
	}
}

func TestQueueHandlerSendsTheInitialListOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	all := func(*v1alpha1.Application) bool { return true }
	for _, initial := range []bool{true, false} {
		q := newAppQueue()
		h := q.handler(initial, all)
		h.OnAdd(queuedApp("listed", "1"), true)
		h.OnAdd(queuedApp("new", "2"), false)
		want := 1
		if initial {
			want = 2
		}
		if q.len() != want {
			t.Errorf("initial=%v: %d events, want %d", initial, q.len(), want)
		}
	}
}
