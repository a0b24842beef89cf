package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/capstan-cd/capstan/internal/argoapi"
	"github.com/capstan-cd/capstan/internal/server"
)

// apiReference lists every operation of Argo CD's API, as the REST path
// and the gRPC method, with whether Capstan serves it.
func apiReference() (string, error) {
	schema, err := argoapi.Load()
	if err != nil {
		return "", err
	}
	methods, err := schema.Methods()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# REST and gRPC operations\n\n")
	b.WriteString("Every operation of Argo CD's API, by service, as its REST path and its gRPC method. Each is served on the API server's one port " +
		"over REST, gRPC and gRPC-Web, with the RBAC check, project scoping and Secret masking of Argo CD's handler. " +
		"Capstan's own additions (the web UI's list, the event streams) are not listed.\n\n")
	service := ""
	for _, md := range methods {
		if svc := string(md.Parent().FullName()); svc != service {
			service = svc
			fmt.Fprintf(&b, "\n## %s\n\n| Operation | REST | Status |\n|---|---|---|\n", service)
		}
		var rest []string
		for _, bd := range argoapi.BindingsOf(md) {
			rest = append(rest, fmt.Sprintf("`%s %s`", bd.Method, bd.Path))
		}
		if len(rest) == 0 {
			rest = []string{"gRPC only"}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", md.Name(), strings.Join(rest, "<br>"), status(string(md.FullName())))
	}
	return b.String(), nil
}

// status is what Capstan answers for the operation.
func status(fullName string) string {
	switch {
	case slices.Contains(server.Unimplemented, fullName):
		return "not served: 501 Unimplemented"
	case strings.Contains(fullName, "Write"):
		return "served while `hydrator.enabled` is on; otherwise 501, as Argo CD's"
	}
	return "served"
}
