package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// TestBindEnv: argocd-cmd-params-cm's variables set a component's flags
// unless the command line does, and a bad value names its variable.
func TestBindEnv(t *testing.T) {
	run := func(args ...string) (int, time.Duration, error) {
		var workers int
		var resync time.Duration
		cmd := &cobra.Command{Use: "controller", RunE: func(*cobra.Command, []string) error { return nil }}
		cmd.Flags().IntVar(&workers, "status-processors", 20, "")
		cmd.Flags().DurationVar(&resync, "app-resync", 120*time.Second, "")
		bindEnv(cmd, controllerEnv)
		cmd.SetArgs(args)
		err := cmd.Execute()
		return workers, resync, err
	}
	t.Setenv("ARGOCD_APPLICATION_CONTROLLER_STATUS_PROCESSORS", "50")
	t.Setenv("ARGOCD_RECONCILIATION_TIMEOUT", "")
	if w, r, err := run(); err != nil || w != 50 || r != 120*time.Second {
		t.Errorf("from the environment: %d %s %v; want 50 and the default resync", w, r, err)
	}
	if w, _, err := run("--status-processors", "7"); err != nil || w != 7 {
		t.Errorf("the command line wins: %d %v", w, err)
	}
	t.Setenv("ARGOCD_RECONCILIATION_TIMEOUT", "soon")
	if _, _, err := run(); err == nil || !strings.Contains(err.Error(), "ARGOCD_RECONCILIATION_TIMEOUT") {
		t.Errorf("a bad value: %v; want an error naming the variable", err)
	}
}

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
