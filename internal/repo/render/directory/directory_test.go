package directory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
)

const root = "testdata/repo"

func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func TestRenderDirectoryOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *v1alpha1.ApplicationSourceDirectory
		want []string
	}{
		{"top level only", nil,
			[]string{"ConfigMap/first", "ConfigMap/second", "Service/web"}},
		{"recurse", &v1alpha1.ApplicationSourceDirectory{Recurse: true},
			[]string{"ConfigMap/first", "ConfigMap/second", "Deployment/deep", "Service/web", "ConfigMap/test-only"}},
		{"recurse with exclude", &v1alpha1.ApplicationSourceDirectory{Recurse: true, Exclude: "test/*"},
			[]string{"ConfigMap/first", "ConfigMap/second", "Deployment/deep", "Service/web"}},
		{"recurse with brace include", &v1alpha1.ApplicationSourceDirectory{Recurse: true, Include: "{cm.yaml,sub/*}"},
			[]string{"ConfigMap/first", "ConfigMap/second", "Deployment/deep"}},
		{"include json only", &v1alpha1.ApplicationSourceDirectory{Recurse: true, Include: "*.json"},
			[]string{"Service/web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Render(context.Background(), root, "apps/plain", tc.opts, nil, Walk{})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(objs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("objects = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRenderJsonnet(t *testing.T) {
	opts := &v1alpha1.ApplicationSourceDirectory{Jsonnet: v1alpha1.ApplicationSourceJsonnet{
		TLAs:    []v1alpha1.JsonnetVar{{Name: "replicas", Value: "3", Code: true}, {Name: "prefix", Value: "${ARGOCD_APP_NAME}"}},
		ExtVars: []v1alpha1.JsonnetVar{{Name: "env", Value: "prod"}, {Name: "app", Value: "$ARGOCD_APP_NAME"}},
		Libs:    []string{"vendor"},
	}}
	objs, err := Render(context.Background(), root, "apps/jsonnet", opts, map[string]string{"ARGOCD_APP_NAME": "guestbook"}, Walk{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(objs), []string{"ConfigMap/guestbook-config", "Deployment/guestbook"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("objects = %v, want %v", got, want)
	}
	data, _, _ := unstructured.NestedStringMap(objs[0].Object, "data")
	if !reflect.DeepEqual(data, map[string]string{"env": "prod", "app": "guestbook"}) {
		t.Errorf("configmap data = %v", data)
	}
	if r, _, _ := unstructured.NestedInt64(objs[1].Object, "spec", "replicas"); r != 3 {
		t.Errorf("replicas = %d, want 3 (tla code)", r)
	}
}

func TestRenderErrors(t *testing.T) {
	_, err := Render(context.Background(), root, "apps/broken", nil, nil, Walk{})
	if err == nil || !strings.Contains(err.Error(), "bad.yaml") || !strings.Contains(err.Error(), "line 10") {
		t.Errorf("malformed manifest: got %v, want an error naming bad.yaml line 10", err)
	}
	for _, path := range []string{"../", "apps/../../", "/etc"} {
		if _, err := Render(context.Background(), root, path, nil, nil, Walk{}); !errors.Is(err, pathsafe.ErrOutOfBounds) {
			t.Errorf("path %q: got %v, want ErrOutOfBounds", path, err)
		}
	}
	_, err = Render(context.Background(), root, "apps/escape", nil, nil, Walk{})
	if !errors.Is(err, pathsafe.ErrOutOfBounds) && (err == nil || !strings.Contains(err.Error(), "outside")) {
		t.Errorf("jsonnet import outside the repository: got %v", err)
	}
	_, err = Render(context.Background(), root, "apps/jsonnet", &v1alpha1.ApplicationSourceDirectory{
		Jsonnet: v1alpha1.ApplicationSourceJsonnet{Libs: []string{"../../etc"}},
	}, nil, Walk{})
	if !errors.Is(err, pathsafe.ErrOutOfBounds) {
		t.Errorf("jsonnet lib outside the repository: got %v", err)
	}
}

func TestRenderRefusesEscapingSymlinks(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	if err := os.MkdirAll(filepath.Join(repo, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(base, "secret.yaml")
	if err := os.WriteFile(secret, []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(repo, "app", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), repo, "app", nil, nil, Walk{}); !errors.Is(err, pathsafe.ErrOutOfBounds) {
		t.Errorf("got %v, want ErrOutOfBounds", err)
	}
}

func TestDirectoryLimits(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {blob: %q}\n", i, strings.Repeat("x", 1000))
		if err := os.WriteFile(filepath.Join(dir, "app", fmt.Sprintf("cm-%d.yaml", i)), []byte(cm), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer func(n int) { MaxFiles = n }(MaxFiles)
	if _, err := Render(context.Background(), dir, "app", nil, nil, Walk{MaxCombinedBytes: 2500}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "over 2500 bytes") {
		t.Errorf("combined size: %v", err)
	}
	MaxFiles = 2
	if _, err := Render(context.Background(), dir, "app", nil, nil, Walk{}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 2 manifest files") {
		t.Errorf("file count: %v", err)
	}
	MaxFiles = 3
	if objs, err := Render(context.Background(), dir, "app", nil, nil, Walk{}); err != nil || len(objs) != 3 {
		t.Errorf("within the limits: %d objects, %v", len(objs), err)
	}
}

// TestJsonnetImportsOfDevicesAreRefusedUnread is a finding of the tenant
// review: an import of a link to a device, or of a FIFO in the checkout,
// is refused before anything is read from it (the old importer read
// /dev/zero until memory ran out, and only then checked the path).
func TestJsonnetImportsOfDevicesAreRefusedUnread(t *testing.T) {
	for name, mk := range map[string]func(path string) error{
		"a link to /dev/zero": func(path string) error { return os.Symlink("/dev/zero", path) },
		"a FIFO":              func(path string) error { return syscall.Mkfifo(path, 0o644) },
	} {
		repo := t.TempDir()
		if err := os.MkdirAll(filepath.Join(repo, "app"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "app", "main.jsonnet"), []byte("{a: importstr 'z.txt'}"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := mk(filepath.Join(repo, "app", "z.txt")); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := Render(context.Background(), repo, "app", nil, nil, Walk{})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: rendered", name)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the import is being read", name)
		}
	}
}

// TestHiddenDirectories: a recursive walk skips directories whose names
// start with a dot unless Walk.IncludeHidden, as Argo CD's
// ARGOCD_REPO_SERVER_INCLUDE_HIDDEN_DIRECTORIES; dot files never count.
func TestHiddenDirectories(t *testing.T) {
	fsys := fstest.MapFS{
		"app/cm.yaml":          {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shown}\n")},
		"app/.hidden/cm.yaml":  {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hidden}\n")},
		"app/.dotfile.yaml":    {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dotfile}\n")},
		"app/sub/.x/deep.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\n")},
	}
	app, _ := fs.Sub(fsys, "app")
	names := func(walk Walk) string {
		t.Helper()
		objs, err := RenderFS(context.Background(), app, "app", &v1alpha1.ApplicationSourceDirectory{Recurse: true}, walk)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range objs {
			out = append(out, o.GetName())
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	if got := names(Walk{}); got != "shown" {
		t.Errorf("default walk: %s, want shown", got)
	}
	if got := names(Walk{IncludeHidden: true}); got != "deep,hidden,shown" {
		t.Errorf("with hidden directories: %s, want deep,hidden,shown", got)
	}
}

// TestDisableExtensionFilter: directory.disableExtensionFilter reads
// files of any extension (as Argo CD 3.6 does for *.yaml.sealed and the
// like), which include and exclude then pick; text that holds no object
// is skipped, and dot files are never read.
func TestDisableExtensionFilter(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n",
		"secret.yaml.sealed":  "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata: {name: sealed}\n",
		"notes.txt":           "just some words\n",
		".argocd-source.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hidden}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		opts *v1alpha1.ApplicationSourceDirectory
		want []string
	}{
		{"the filter on", &v1alpha1.ApplicationSourceDirectory{Include: "*.sealed"}, []string{}},
		{"off, with an include", &v1alpha1.ApplicationSourceDirectory{DisableExtensionFilter: true, Include: "*.sealed"}, []string{"SealedSecret/sealed"}},
		{"off, every file", &v1alpha1.ApplicationSourceDirectory{DisableExtensionFilter: true}, []string{"ConfigMap/plain", "SealedSecret/sealed"}},
	} {
		objs, err := Render(context.Background(), dir, ".", tc.opts, nil, Walk{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := names(objs); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
