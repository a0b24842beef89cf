package cmdutil_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
)

// An Argo CD flag that changes nothing in Capstan is accepted, and the
// command says why on stderr.
func ExampleNoEffect() {
	cmd := &cobra.Command{Use: "stats", Run: func(cmd *cobra.Command, _ []string) {
		cmdutil.NoteNoEffect(cmd)
	}}
	cmdutil.NoEffect(cmd, map[string]string{"redis": "string"}, "the figures do not come from Redis")
	cmd.SetArgs([]string{"--redis", "argocd-redis:6379"})
	cmd.SetErr(os.Stdout)
	fmt.Println(cmd.Execute())
	// Output:
	// --redis has no effect: the figures do not come from Redis
	// <nil>
}

// A command ends the process with its own code through an ExitError;
// any other error exits 1 with its message.
func ExampleExitCode() {
	fmt.Println(cmdutil.ExitCode(cmdutil.ExitError{Code: 2}))
	fmt.Println(cmdutil.ExitCode(fmt.Errorf("app diff: %w", cmdutil.ExitError{Code: 20, Err: errors.New("no such app")})))
	fmt.Println(cmdutil.ExitCode(errors.New("boom")))
	// Output:
	// 2 false
	// 20 true
	// 1 true
}

func TestReadObject(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var v struct {
		Name string `json:"name"`
	}
	if err := cmdutil.ReadObject(write("ok.yaml", "name: web\n"), &v); err != nil || v.Name != "web" {
		t.Errorf("a good file: %+v %v", v, err)
	}
	if err := cmdutil.ReadObject(write("typo.yaml", "nmae: web\n"), &v); err == nil || !strings.Contains(err.Error(), "typo.yaml") {
		t.Errorf("an unknown field: %v; want an error naming the file", err)
	}
	big := write("big.yaml", strings.Repeat("#", cmdutil.MaxLocalFile+1))
	if err := cmdutil.ReadObject(big, &v); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("a file over the bound: %v", err)
	}
}
