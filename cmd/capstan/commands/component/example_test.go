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

// image-updater template renders a commit message template with sample
// changes, as Argo CD Image Updater's does; without a file, the default.
func Example_imageUpdaterTemplate() {
	for _, c := range component.Commands() {
		if c.Name() != "image-updater" {
			continue
		}
		c.SetArgs([]string{"template"})
		if err := c.Execute(); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// build: automatic update of example-app
	//
	// updates image gcr.io/example/example tag '1.0.0' to '1.0.1'
	// updates image gcr.io/example/updater tag '1.4.0' to '1.5.0'
}
