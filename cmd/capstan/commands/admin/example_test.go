package admin_test

import (
	"fmt"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/admin"
)

// capstan admin's tools, as Argo CD's argocd admin names them.
func ExampleNewCommand() {
	for _, c := range admin.NewCommand().Commands() {
		fmt.Println(c.Name())
	}
	// Output:
	// app
	// cluster
	// dashboard
	// export
	// health
	// import
	// initial-password
	// notifications
	// proj
	// redis-initial-password
	// repo
	// settings
}
