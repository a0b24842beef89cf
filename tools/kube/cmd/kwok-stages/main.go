// Command kwok-stages writes the kwok Stage objects the local clusters use:
// nodes become Ready and keep a heartbeat, pods start, complete and go away.
// They come from the stage YAML embedded in kwok's own module, so they always
// match the kwok binary built beside them.
package main

import (
	"fmt"
	"os"
	"strings"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kwok-stages FILE")
		os.Exit(2)
	}
	stages := []string{
		nodefast.DefaultNodeInit,
		nodeheartbeat.DefaultNodeHeartbeat,
		podfast.DefaultPodReady,
		podfast.DefaultPodComplete,
		podfast.DefaultPodDelete,
	}
	var b strings.Builder
	for _, s := range stages {
		b.WriteString("---\n")
		b.WriteString(strings.TrimPrefix(s, "---\n"))
		if !strings.HasSuffix(s, "\n") {
			b.WriteString("\n")
		}
	}
	if err := os.WriteFile(os.Args[1], []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
