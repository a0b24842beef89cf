package plugin_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/render/plugin"
	"github.com/capstan-cd/capstan/internal/testing/cmpserver"
)

// maker prints a ConfigMap of what its environment and files hold; it has
// no discovery rules, so only sources naming it use it.
const maker = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: maker
spec:
  version: v1.0
  init:
    command: [sh, -c]
    args: ["echo initialised > init.txt"]
  parameters:
    static:
      - {name: replicas, title: Replicas, required: true, string: "1"}
      - {name: tags, collectionType: array, array: [latest]}
    dynamic:
      command: [sh, -c, 'echo "[{\"name\": \"labels\", \"collectionType\": \"map\", \"map\": {\"app\": \"$ARGOCD_APP_NAME\"}}]"']
  generate:
    command: [sh, -c]
    args:
      - |
        cat <<END
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: made-by-plugin
        data:
          app: "$ARGOCD_APP_NAME"
          revision: "$ARGOCD_APP_REVISION"
          env: "$ARGOCD_ENV_GREETING"
          replicas: "$PARAM_REPLICAS"
          firstTag: "$PARAM_TAGS_0"
          team: "$PARAM_LABELS_TEAM"
          init: "$(cat init.txt)"
          file: "$(cat input.txt)"
          shared: "$(cat ../shared/common.txt)"
          secret: "$(cat ../../secret.txt 2>/dev/null || echo absent)"
        END
`

// finder claims directories holding capstan-plugin.txt.
const finder = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: finder
spec:
  discover:
    fileName: "./capstan-plugin.txt"
  generate:
    command: [sh, -c]
    args: ["printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: found\n'"]
`

// failing fails with a message on its standard error.
const failing = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: failing
spec:
  generate:
    command: [sh, -c]
    args: ["echo 'values are missing' >&2; exit 3"]
`

func checkout(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// servers start a plugin server: Argo CD's own, and Capstan's.
var servers = map[string]func(t testing.TB, socketDir, config string) string{
	"argocd-cmp-server": cmpserver.Start,
	"capstan":           cmpserver.Serve,
}

// TestRender runs the same plugins under Argo CD's plugin server and
// Capstan's, through Capstan's client: both must answer alike.
func TestRender(t *testing.T) {
	for name, start := range servers {
		t.Run(name, func(t *testing.T) { testRender(t, start) })
	}
}

func testRender(t *testing.T, start func(t testing.TB, socketDir, config string) string) {
	dir := cmpserver.SocketDir(t)
	start(t, dir, maker)
	start(t, dir, finder)
	start(t, dir, failing)
	c := plugin.New(plugin.Options{SocketDir: dir, Exclude: []string{"secret*"}})
	ctx := context.Background()
	if !c.Installed() {
		t.Fatal("Installed() = false with three plugins listening")
	}
	root := checkout(t, map[string]string{
		"apps/web/input.txt":            "from the checkout",
		"apps/shared/common.txt":        "next door",
		"apps/found/capstan-plugin.txt": "",
		"secret.txt":                    "not sent",
	})
	three := "3"
	src := &plugin.Source{Root: root, Path: "apps/web",
		Env: map[string]string{"ARGOCD_APP_NAME": "web", "ARGOCD_APP_REVISION": "abc123"},
		Plugin: &v1alpha1.ApplicationSourcePlugin{
			Name: "maker-v1.0",
			Env:  v1alpha1.Env{{Name: "GREETING", Value: "hello $ARGOCD_APP_NAME, $$5"}},
			Parameters: v1alpha1.ApplicationSourcePluginParameters{
				{Name: "replicas", String_: &three},
				{Name: "tags", Array: []string{"v1", "v2"}},
				{Name: "labels", Map: map[string]string{"team": "blue"}},
			},
		}}

	t.Run("named plugin: init, generate, env and parameters", func(t *testing.T) {
		objs, err := c.Render(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != 1 || objs[0].GetName() != "made-by-plugin" {
			t.Fatalf("objects = %v", objs)
		}
		data := objs[0].Object["data"].(map[string]any)
		want := map[string]string{"app": "web", "revision": "abc123", "env": "hello web, $5", "replicas": "3",
			"firstTag": "v1", "team": "blue", "init": "initialised", "file": "from the checkout", "shared": "next door", "secret": "absent"}
		for k, v := range want {
			if data[k] != v {
				t.Errorf("data[%s] = %q, want %q", k, data[k], v)
			}
		}
	})

	t.Run("manifest-generate-paths narrow what is sent", func(t *testing.T) {
		narrow := plugin.New(plugin.Options{SocketDir: dir, Exclude: []string{"secret*"}, UseManifestGeneratePaths: true})
		for paths, shared := range map[string]string{
			"":                  "next door", // no annotation: the whole checkout
			".":                 "",          // the source's directory only
			"../shared":         "next door", // apps/
			"/apps/web;/other":  "next door", // the root
			"../../../../../up": "next door", // out of the checkout: its root
		} {
			narrowed := *src
			narrowed.GeneratePaths = paths
			objs, err := narrow.Render(ctx, &narrowed)
			if err != nil {
				t.Fatalf("%q: %v", paths, err)
			}
			data := objs[0].Object["data"].(map[string]any)
			if data["shared"] != shared || data["file"] != "from the checkout" {
				t.Errorf("%q: shared %q, file %q; want shared %q", paths, data["shared"], data["file"], shared)
			}
		}
	})
	t.Run("parameter announcements: dynamic, then static", func(t *testing.T) {
		params, err := c.Parameters(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]string, len(params))
		for i, p := range params {
			got[i] = string(p)
		}
		want := []string{
			`{"collectionType":"map","map":{"app":"web"},"name":"labels"}`,
			`{"name":"replicas","required":true,"string":"1","title":"Replicas"}`,
			`{"array":["latest"],"collectionType":"array","name":"tags"}`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("announcements:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("discovery picks the plugin whose rules match", func(t *testing.T) {
		found := &plugin.Source{Root: root, Path: "apps/found"}
		if name, err := c.Discover(ctx, found); err != nil || name != "finder" {
			t.Fatalf("Discover = %q, %v; want finder", name, err)
		}
		objs, err := c.Render(ctx, found)
		if err != nil || len(objs) != 1 || objs[0].GetName() != "found" {
			t.Fatalf("Render = %v, %v", objs, err)
		}
		plain := &plugin.Source{Root: root, Path: "apps/web"}
		if name, err := c.Discover(ctx, plain); err != nil || name != "" {
			t.Errorf("Discover on a directory no rule matches = %q, %v; want none", name, err)
		}
		if _, err := c.Render(ctx, plain); !errors.Is(err, plugin.ErrNotFound) || !strings.Contains(err.Error(), "could not find plugin supporting the given repository") {
			t.Errorf("Render with no plugin claiming it: %v", err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		for name, want := range map[string]string{
			"missing":   `could not find cmp-server plugin with name "missing" supporting the given repository`,
			"../escape": "want the name of a plugin",
			"failing":   "values are missing",
		} {
			_, err := c.Render(ctx, &plugin.Source{Root: root, Path: "apps/web", Plugin: &v1alpha1.ApplicationSourcePlugin{Name: name}})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("plugin %q: %v; want %q", name, err, want)
			}
		}
		if _, err := c.Render(ctx, &plugin.Source{Root: root, Path: "../x", Plugin: src.Plugin}); err == nil {
			t.Error("a path climbing out of the checkout was sent")
		}
	})
}

func TestNoSocketDirectory(t *testing.T) {
	c := plugin.New(plugin.Options{SocketDir: filepath.Join(t.TempDir(), "none")})
	if c.Installed() {
		t.Error("Installed() with no socket directory")
	}
	root := checkout(t, map[string]string{"a/x.yaml": "x"})
	if name, err := c.Discover(context.Background(), &plugin.Source{Root: root, Path: "a"}); name != "" || err != nil {
		t.Errorf("Discover = %q, %v", name, err)
	}
}
