package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/version"
)

func TestVersionJSON(t *testing.T) {
	var out bytes.Buffer
	root := &cobra.Command{Use: "capstan"}
	defer AddCommands(root, false)()
	root.SetOut(&out)
	root.SetArgs([]string{"version", "--client", "-o", "json"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var got clientVersion
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("version -o json printed invalid JSON: %v\n%s", err, out.String())
	}
	want := version.Get()
	if got.Client != want {
		t.Errorf("client version = %+v, want %+v", got.Client, want)
	}
	for _, key := range []string{"Version", "BuildDate", "GitCommit", "GitTreeState", "GoVersion", "Compiler", "Platform"} {
		if !strings.Contains(out.String(), `"`+key+`"`) {
			t.Errorf("json output lacks key %s", key)
		}
	}
}

func TestVersionWideAndErrors(t *testing.T) {
	var out bytes.Buffer
	if err := printVersion(&out, "capstan", clientVersion{Client: version.Get()}, "wide"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "capstan: ") || !strings.Contains(out.String(), "Platform: ") {
		t.Errorf("unexpected wide output:\n%s", out.String())
	}
	if err := printVersion(&out, "capstan", clientVersion{Client: version.Get()}, "yaml2"); err == nil {
		t.Error("unknown output format was accepted")
	}
}
