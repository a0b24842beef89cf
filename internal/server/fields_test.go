package server

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func fieldsOf(raw string) fieldSelection { return parseFields(url.Values{"fields": {raw}}) }

func projectedApp() *v1alpha1.Application {
	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd", UID: types.UID("u1"), ResourceVersion: "7", Labels: map[string]string{"team": "a"}},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Namespace: "apps"},
			Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git"}},
		Status: v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: "abc"},
			Health: v1alpha1.AppHealthStatus{Status: v1alpha1.HealthStatusHealthy}},
	}
}

func TestApplicationListProjection(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ fields, want string }{
		{"items.metadata.name,items.status.sync.status", `{"metadata":{"name":"web"},"status":{"sync":{"status":"Synced"}}}`},
		// A field under a selected one adds nothing; unknown paths nothing.
		{"items.spec,items.spec.project,items.nothing", `{"spec":{"source":{"repoURL":"https://git.example.com/apps.git"},"destination":{"namespace":"apps"},"project":"default"}}`},
		// Excluding leaves every other field of the table; unset maps,
		// lists and pointers are left out, empty structures kept.
		{"-items.spec,items.spec.source,items.spec.destination,items.metadata.labels,items.status.health,items.metadata.creationTimestamp",
			`{"metadata":{"name":"web","namespace":"argocd"},"spec":{"project":"default"},"status":{"sourceHydrator":{},"summary":{},"sync":{"revision":"abc","status":"Synced"}}}`},
	} {
		got, err := projectApp(projectedApp(), fieldsOf(c.fields).listFields())
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("fields=%s:\n got %s\nwant %s", c.fields, got, c.want)
		}
	}
}

func TestFilterJSON(t *testing.T) {
	t.Parallel()
	doc := `{"result":{"type":"MODIFIED","application":{"metadata":{"name":"web","labels":{"a":"b"}},"status":{"resources":[{"kind":"ConfigMap","name":"x"}]}}}}`
	for _, c := range []struct{ fields, want string }{
		{"result.type,result.application.metadata.name", `{"result":{"application":{"metadata":{"name":"web"}},"type":"MODIFIED"}}`},
		{"result.application.status.resources.kind", `{"result":{"application":{"status":{"resources":[{"kind":"ConfigMap"}]}}}}`},
		{"-result.application.metadata.labels,result.application.status", `{"result":{"application":{"metadata":{"name":"web"}},"type":"MODIFIED"}}`},
		// A path is a whole key: result.app does not select result.application.
		{"result.app", `{"result":{}}`},
	} {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		fieldsOf(c.fields).filterJSON("", v)
		got, _ := json.Marshal(v)
		if string(got) != c.want {
			t.Errorf("fields=%s:\n got %s\nwant %s", c.fields, got, c.want)
		}
	}
}

// TestStreamEventProjection sends events through one stream's sender: the
// selected fields only, and a change the selection does not show is not
// sent again.
func TestStreamEventProjection(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	s := &Server{}
	sender := &appSender{s: s, stream: s.startEventStream(rec), fields: fieldsOf("result.type,result.application.metadata.name"), sent: map[string]uint64{}}
	app := projectedApp()
	sender.send(appEvent{watch.Added, app})
	changed := app.DeepCopy()
	changed.ResourceVersion, changed.Status.Sync.Status = "8", v1alpha1.SyncStatusCodeOutOfSync
	sender.send(appEvent{watch.Modified, changed})
	sender.send(appEvent{watch.Modified, changed})
	sender.send(appEvent{watch.Deleted, changed})
	want := `data: {"result":{"application":{"metadata":{"name":"web"}},"type":"ADDED"}}` + "\n\n" +
		`data: {"result":{"application":{"metadata":{"name":"web"}},"type":"MODIFIED"}}` + "\n\n" +
		`data: {"result":{"application":{"metadata":{"name":"web"}},"type":"DELETED"}}` + "\n\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("stream:\n%s\nwant:\n%s", got, want)
	}

	// Without a selection, each change is the whole Application.
	rec = httptest.NewRecorder()
	whole := &appSender{s: s, stream: s.startEventStream(rec), sent: map[string]uint64{}}
	whole.send(appEvent{watch.Modified, changed})
	var msg struct{ Result applicationEvent }
	if err := json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(rec.Body.String(), "data: "))), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Result.Type != watch.Modified || msg.Result.Application.Status.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync {
		t.Errorf("whole event: %+v", msg.Result)
	}
}
