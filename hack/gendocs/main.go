// Command gendocs writes the generated references under docs/reference:
// every CLI command (from the cobra tree), every argocd-cm and
// argocd-cmd-params-cm key with what Capstan does with it, every REST
// operation of Argo CD's API with its status, and every metric. `make
// docs` runs it with the repository's root as its argument;
// TestReferencesAreCurrent fails when a file is stale.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	refs, err := references(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
	for name, text := range refs {
		path := filepath.Join(root, referenceDir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil { //nolint:gosec // documentation, world-readable
			fmt.Fprintln(os.Stderr, "gendocs:", err)
			os.Exit(1)
		}
	}
}
