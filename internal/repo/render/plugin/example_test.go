package plugin_test

import (
	"context"
	"fmt"
	"os"

	"github.com/capstan-cd/capstan/internal/repo/render/plugin"
)

// Without a socket in the plugin directory (a repo server with no plugin
// sidecar), nothing is discovered and sources keep their usual types.
func Example() {
	sockets, _ := os.MkdirTemp("", "cmp")
	defer os.RemoveAll(sockets)
	checkout, _ := os.MkdirTemp("", "checkout")
	defer os.RemoveAll(checkout)
	_ = os.Mkdir(checkout+"/app", 0o755)

	c := plugin.New(plugin.Options{SocketDir: sockets})
	name, err := c.Discover(context.Background(), &plugin.Source{Root: checkout, Path: "app"})
	fmt.Printf("installed: %v, discovered: %q, error: %v\n", c.Installed(), name, err)
	// Output: installed: false, discovered: "", error: <nil>
}
