package commands

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandHasExamples walks the command tree: every command that
// does something shows examples in its --help.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c.Example == "" && c.Name() != "help" && !strings.HasPrefix(c.CommandPath(), "capstan completion") {
			t.Errorf("%q has no examples in its help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := NewRoot()
	root.InitDefaultCompletionCmd()
	walk(root)
}

// TestShellCompletion prints the bash completion script.
func TestShellCompletion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Execute([]string{"completion", "bash"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "__start_capstan") {
		t.Errorf("completion bash: exit %d, %d bytes, %s", code, out.Len(), errOut.String())
	}
}
