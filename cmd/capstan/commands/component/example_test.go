package component_test

import (
	"fmt"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/component"
)

// The component commands, each run by Argo CD's install under its
// component's name (argocd-server runs server, and so on).
func ExampleCommands() {
	for _, c := range component.Commands() {
		fmt.Println(c.Name())
	}
	// Output:
	// dex
	// repo-server
	// repo-render-worker
	// cmp-server
	// git-ask-pass
	// controller
	// server
	// run
	// image-updater
	// applicationset-controller
	// notifications-controller
}
