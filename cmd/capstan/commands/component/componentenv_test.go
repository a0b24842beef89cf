package component

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
