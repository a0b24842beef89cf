package argoapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

func message(t *testing.T, name protoreflect.FullName) *dynamicpb.Message {
	t.Helper()
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.files.FindDescriptorByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return dynamicpb.NewMessage(d.(protoreflect.MessageDescriptor))
}

const applicationJSON = `{
  "metadata": {"name": "guestbook", "namespace": "argocd", "generation": 3, "creationTimestamp": "2026-11-01T10:00:00Z",
    "labels": {"team": "web"}, "finalizers": ["resources-finalizer.argocd.argoproj.io"]},
  "spec": {
    "project": "default",
    "source": {"repoURL": "https://git.example.com/apps.git", "path": "guestbook", "targetRevision": "HEAD",
      "helm": {"parameters": [{"name": "replicas", "value": "2"}], "valuesObject": {"image": {"tag": "1.0"}}}},
    "destination": {"server": "https://kubernetes.default.svc", "namespace": "guestbook"},
    "syncPolicy": {"automated": {"prune": true, "selfHeal": true}, "syncOptions": ["CreateNamespace=true"],
      "retry": {"limit": 5, "backoff": {"duration": "5s", "factor": 2, "maxDuration": "3m"}}},
    "ignoreDifferences": [{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}]
  },
  "status": {
    "sync": {"status": "Synced", "revision": "abc123"},
    "health": {"status": "Healthy"},
    "resources": [{"version": "v1", "kind": "Service", "namespace": "guestbook", "name": "web", "status": "Synced", "health": {"status": "Healthy"}}],
    "history": [{"id": 0, "revision": "abc123", "deployedAt": "2026-11-01T10:05:00Z", "deployStartedAt": "2026-11-01T10:04:58Z",
      "source": {"repoURL": "https://git.example.com/apps.git", "path": "guestbook"}}],
    "operationState": {"operation": {"sync": {"revision": "abc123", "prune": true}}, "phase": "Succeeded",
      "message": "successfully synced (all tasks run)", "startedAt": "2026-11-01T10:04:58Z", "finishedAt": "2026-11-01T10:05:00Z",
      "syncResult": {"revision": "abc123", "resources": [{"group": "", "version": "v1", "kind": "Service", "namespace": "guestbook",
        "name": "web", "status": "Synced", "message": "service/web created", "hookPhase": "Running", "syncPhase": "Sync"}]}},
    "reconciledAt": "2026-11-01T10:06:00Z",
    "summary": {"images": ["nginx:1.27"]}
  }
}`

// TestApplicationRoundTrips: an Application's REST JSON read into Argo
// CD's message, written to the wire and back, gives the same JSON.
func TestApplicationRoundTrips(t *testing.T) {
	m := message(t, "github.com.argoproj.argo_cd.v3.pkg.apis.application.v1alpha1.Application")
	if err := UnmarshalJSON([]byte(applicationJSON), m); err != nil {
		t.Fatal(err)
	}
	wire, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	back := dynamicpb.NewMessage(m.Descriptor())
	if err := proto.Unmarshal(wire, back); err != nil {
		t.Fatal(err)
	}
	out, err := MarshalJSON(back)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	_ = json.Unmarshal([]byte(applicationJSON), &want)
	_ = json.Unmarshal(out, &got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the Application:\n got %s\nwant %s", out, applicationJSON)
	}
}

func TestKubernetesTypes(t *testing.T) {
	for _, tc := range []struct {
		name protoreflect.FullName
		json string
	}{
		{timeType, `"2026-11-01T10:00:00Z"`},
		{microTimeType, `"2026-11-01T10:00:00.123456Z"`},
		{intOrStringType, `8080`},
		{intOrStringType, `"http"`},
		{quantityType, `"500m"`},
		{durationType, `"1m30s"`},
		{rawType, `{"a":[1,2]}`},
		{fieldsV1Type, `{"f:spec":{"f:replicas":{}}}`},
	} {
		m := message(t, tc.name)
		if err := UnmarshalJSON([]byte(tc.json), m); err != nil {
			t.Fatalf("%s %s: %v", tc.name, tc.json, err)
		}
		out, err := MarshalJSON(m)
		if err != nil || string(out) != tc.json {
			t.Errorf("%s: %s became %s (%v)", tc.name, tc.json, out, err)
		}
	}
}

// TestInlineFields: fields Argo CD's Go types embed inline read and write
// at the level of their enclosing object.
func TestInlineFields(t *testing.T) {
	const node = `{"group":"apps","version":"v1","kind":"Deployment","namespace":"shop","name":"web","uid":"u1","resourceVersion":"5"}`
	m := message(t, v1alpha1+".ResourceNode")
	if err := UnmarshalJSON([]byte(node), m); err != nil {
		t.Fatal(err)
	}
	out, err := MarshalJSON(m)
	var want, got any
	_ = json.Unmarshal([]byte(node), &want)
	_ = json.Unmarshal(out, &got)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ResourceNode: %s became %s (%v)", node, out, err)
	}
	const param = `{"name":"p","map":{"a":"b"}}`
	m = message(t, v1alpha1+".ApplicationSourcePluginParameter")
	if err := UnmarshalJSON([]byte(param), m); err != nil {
		t.Fatal(err)
	}
	if out, err := MarshalJSON(m); err != nil || string(out) != `{"map":{"a":"b"},"name":"p"}` {
		t.Errorf("plugin parameter: %s became %s (%v)", param, out, err)
	}
	const strategy = `{"hook":{"force":true}}`
	m = message(t, v1alpha1+".SyncStrategy")
	if err := UnmarshalJSON([]byte(strategy), m); err != nil {
		t.Fatal(err)
	}
	if out, err := MarshalJSON(m); err != nil || string(out) != strategy {
		t.Errorf("sync strategy: %s became %s (%v)", strategy, out, err)
	}
}

func TestFillRequired(t *testing.T) {
	m := message(t, "application.LogEntry")
	if _, err := proto.Marshal(m); err == nil {
		t.Fatal("a log entry without last marshalled: the schema no longer requires it")
	}
	FillRequired(m)
	if _, err := proto.Marshal(m); err != nil {
		t.Errorf("after FillRequired: %v", err)
	}
}
