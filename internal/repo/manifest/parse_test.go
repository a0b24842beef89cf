package manifest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseMultiDocumentAndLists(t *testing.T) {
	data := `# leading comment
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
---
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata:
    name: b
- apiVersion: v1
  kind: Secret
  metadata:
    name: c
`
	objs, err := Parse("x.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetName())
	}
	if want := []string{"ConfigMap/a", "Service/b", "Secret/c"}; !reflect.DeepEqual(names, want) {
		t.Errorf("objects = %v, want %v", names, want)
	}
}

func TestParseJSON(t *testing.T) {
	objs, err := Parse("x.json", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j"}}`))
	if err != nil || len(objs) != 1 || objs[0].GetName() != "j" {
		t.Fatalf("Parse JSON = %v, %v", objs, err)
	}
}

func TestParseErrorNamesFileAndLine(t *testing.T) {
	data := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n   labels: x\n"
	_, err := Parse("apps/cm.yaml", []byte(data))
	if err == nil {
		t.Fatal("malformed YAML accepted")
	}
	if !strings.HasPrefix(err.Error(), "apps/cm.yaml: ") || !strings.Contains(err.Error(), "line 10") {
		t.Errorf("error %q does not name apps/cm.yaml line 10", err)
	}
}

func TestParseNotAManifest(t *testing.T) {
	_, err := Parse("values.yaml", []byte("replicaCount: 2\n"))
	if !errors.Is(err, ErrNotManifest) {
		t.Errorf("got %v, want ErrNotManifest", err)
	}
}

func TestImages(t *testing.T) {
	objs, err := Parse("w.yaml", []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      initContainers: [{name: init, image: busybox:1.36}]
      containers: [{name: app, image: nginx:1.27}, {name: side, image: nginx:1.27}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: c}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: job, image: registry.example.com/job@sha256:abc}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data: {image: not-an-image}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"busybox:1.36", "nginx:1.27", "registry.example.com/job@sha256:abc"}
	if got := Images(objs); !reflect.DeepEqual(got, want) {
		t.Errorf("Images = %v, want %v", got, want)
	}
}

func TestParseKeepsIntegers(t *testing.T) {
	objs, err := Parse("d.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 3, ratio: 0.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	spec := objs[0].Object["spec"].(map[string]any)
	if _, ok := spec["replicas"].(int64); !ok {
		t.Errorf("replicas is %T, want int64", spec["replicas"])
	}
	if _, ok := spec["ratio"].(float64); !ok {
		t.Errorf("ratio is %T, want float64", spec["ratio"])
	}
}

// TestAliasBombIsRefused parses a "billion laughs" document: nine levels
// of aliases, each repeating the one below nine times. It must fail fast
// with an error instead of expanding into billions of nodes.
func TestAliasBombIsRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString("  " + name + ": &" + name + " [")
		for i := range 9 {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = name
	}
	_, err := Parse("bomb.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "alias") {
		t.Errorf("got %v, want an error about excessive aliasing", err)
	}
}
