package kustomize

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
)

// IsHelmRelay reports whether a program run as argv0 is a build's helm
// (see relay.go): the link named helm in a relay's directory.
func IsHelmRelay(argv0 string) bool {
	return filepath.Base(argv0) == HelmRelayName && filepath.IsAbs(argv0)
}

// RunHelmRelay sends the command line to the build that linked argv0 and
// prints its answer; it returns the exit code.
func RunHelmRelay(argv0 string, args []string, stdout, stderr io.Writer) int {
	conn, err := net.Dial("unix", filepath.Join(filepath.Dir(argv0), relaySocket))
	if err != nil {
		fmt.Fprintf(stderr, "Error: this program serves helm only to a Kustomize build of Capstan's: %v\n", err)
		return 1
	}
	defer conn.Close()
	if err := json.NewEncoder(conn).Encode(relayRequest{Args: args}); err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	var reply relayReply
	if err := json.NewDecoder(conn).Decode(&reply); err != nil {
		fmt.Fprintln(stderr, "Error: reading the answer:", err)
		return 1
	}
	_, _ = stdout.Write(reply.Stdout)
	if reply.Stderr != "" {
		fmt.Fprintln(stderr, reply.Stderr)
	}
	return reply.Code
}
