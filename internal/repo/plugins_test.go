package repo

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/capstan-cd/capstan/internal/repo/render/plugin"
)

// TestPluginsListsListeningSidecars: each socket in the plugin directory is
// a plugin, by its name without .sock; other files are not; no directory
// means no plugins.
func TestPluginsListsListeningSidecars(t *testing.T) {
	dir, err := os.MkdirTemp("", "plugins") // short: a socket path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for _, name := range []string{"kustomized-helm.sock", "cdk8s-v1.0.sock"} {
		l, err := net.Listen("unix", filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.sock.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := NewService(Options{Root: t.TempDir(), Plugins: plugin.Options{SocketDir: dir}})
	got, err := s.Plugins(context.Background(), &PluginsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Plugin{{Name: "cdk8s-v1.0"}, {Name: "kustomized-helm"}}; !reflect.DeepEqual(got.Items, want) {
		t.Errorf("plugins %v, want %v", got.Items, want)
	}

	none := NewService(Options{Root: t.TempDir(), Plugins: plugin.Options{SocketDir: filepath.Join(dir, "missing")}})
	if got, err := none.Plugins(context.Background(), &PluginsRequest{}); err != nil || got.Items == nil || len(got.Items) != 0 {
		t.Errorf("without a plugin directory: %v, %v; want an empty list", got, err)
	}
}
