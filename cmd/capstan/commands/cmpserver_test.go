package commands

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/repo/render/plugin"
)

// TestGitAskPass: run as argocd-git-ask-pass in the environment the repo
// server gives a plugin's commands, the program prints the credentials
// git asks for.
func TestGitAskPass(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "ask.sock")
	ask, err := plugin.ListenAskPass(socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ask.Close()
	env, release := ask.Grant(plugin.GitCreds{Username: "git-user", Password: "s3cret"})
	defer release()
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	if name := "argocd-git-ask-pass"; ComponentNames[name] == "" {
		t.Fatalf("%s is not a program name", name)
	}
	for question, want := range map[string]string{"Username for 'https://git.example.com': ": "git-user", "Password for 'https://git-user@git.example.com': ": "s3cret"} {
		program, args := Program("argocd-git-ask-pass", []string{question})
		var out, errOut bytes.Buffer
		if code := ExecuteAs(program, args, &out, &errOut); code != 0 || strings.TrimSpace(out.String()) != want {
			t.Errorf("%q: exit %d, printed %q (%s); want %q", question, code, out.String(), errOut.String(), want)
		}
	}
	release()
	program, args := Program("argocd-git-ask-pass", []string{"Password for x: "})
	var out, errOut bytes.Buffer
	if code := ExecuteAs(program, args, &out, &errOut); code == 0 || out.Len() > 0 {
		t.Errorf("after the render: exit %d, printed %q", code, out.String())
	}
}
