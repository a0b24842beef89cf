// Command kwok-crds writes the definitions of the kwok custom resources the
// local clusters serve (PortForward: a fake pod's port forwarded to an
// address on this machine; Exec: a command run in a fake pod's container
// runs on this machine). They come from kwok's own module, so they always
// match the kwok binary built beside them.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kwok/kustomize/crd"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kwok-crds FILE")
		os.Exit(2)
	}
	docs := append(append(append([]byte{}, crd.PortForward...), "\n---\n"...), crd.Exec...)
	if err := os.WriteFile(os.Args[1], docs, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
