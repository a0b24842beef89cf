package commands

import (
	"strings"
	"testing"
)

func TestProgram(t *testing.T) {
	for _, tc := range []struct {
		name, wantProgram string
		args, wantArgs    []string
	}{
		{"capstan", "capstan", []string{"version"}, []string{"version"}},
		{"argocd", "argocd", []string{"app", "list"}, []string{"app", "list"}},
		{"argocd-server", "capstan", []string{"--insecure"}, []string{"server", "--insecure"}},
		{"argocd-repo-server", "capstan", nil, []string{"repo-server"}},
		{"argocd-application-controller", "capstan", nil, []string{"controller"}},
		{"argocd-notifications", "capstan", []string{"--argocd-repo-server", "r:8081"}, []string{"notifications-controller", "--argocd-repo-server", "r:8081"}},
	} {
		program, args := Program(tc.name, tc.args)
		if program != tc.wantProgram || strings.Join(args, " ") != strings.Join(tc.wantArgs, " ") {
			t.Errorf("%s %v: %s %v; want %s %v", tc.name, tc.args, program, args, tc.wantProgram, tc.wantArgs)
		}
	}
}
