package kustomize

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseHelmArgs(t *testing.T) {
	tests := []struct {
		args       []string
		positional []string
		flags      map[string]string
		err        string
	}{
		{args: []string{"version", "--short"}},
		{args: []string{"pull", "--untar", "--untardir", "/c/web-1.0.0", "--repo", "https://charts.example.com", "web", "--version", "1.0.0"},
			positional: []string{"web"}, flags: map[string]string{"--untardir": "/c/web-1.0.0", "--repo": "https://charts.example.com", "--version": "1.0.0"}},
		// A flag's value is the next argument, whatever it looks like.
		{args: []string{"template", "shop", "/c/web", "--namespace", "--kube-version"},
			positional: []string{"shop", "/c/web"}, flags: map[string]string{"--namespace": "--kube-version"}},
		{args: []string{"template", "--generate-name", "/c/web"}, positional: []string{"/c/web"}},
		{args: []string{"template", "/c/web"}, err: "takes 2 to 2 arguments"},
		{args: []string{"template", "shop", "/c/web", "--post-renderer", "/bin/sh"}, err: "unknown flag: --post-renderer"},
		{args: []string{"template", "shop", "/c/web", "--name-template", "x"}, err: "--name-template is not supported"},
		{args: []string{"install", "shop", "/c/web"}, err: `unknown command "install"`},
		{args: []string{"pull", "--untardir"}, err: "flag needs an argument"},
	}
	for _, tt := range tests {
		cmd, err := parseHelmArgs(tt.args)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: %v, want an error with %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if tt.flags == nil {
			tt.flags = map[string]string{}
		}
		if !reflect.DeepEqual(cmd.positional, tt.positional) || !reflect.DeepEqual(cmd.flags, tt.flags) {
			t.Errorf("%q: positional %q flags %v; want %q %v", tt.args, cmd.positional, cmd.flags, tt.positional, tt.flags)
		}
	}
}
