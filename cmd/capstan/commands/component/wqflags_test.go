package component

import (
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// TestWorkqueueFlags: without a --wq-* flag or its variable the queue
// keeps controller-runtime's limiter; a flag, or a variable in
// nanoseconds as Argo CD's install sets it, turns Argo CD's limiter on,
// with Argo CD's defaults for the rest.
func TestWorkqueueFlags(t *testing.T) {
	run := func(args ...string) *wqFlags {
		t.Helper()
		w := &wqFlags{}
		cmd := &cobra.Command{Use: "applicationset-controller", RunE: func(*cobra.Command, []string) error { return nil }}
		w.add(cmd.Flags())
		bindEnv(cmd, appSetEnv)
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		return w
	}
	if l := run().limit(); l != nil {
		t.Errorf("no flag: %+v, want controller-runtime's limiter", l)
	}
	t.Setenv("ARGOCD_APPLICATIONSET_CONTROLLER_WORKQUEUE_FAILURE_COOLDOWN_NS", "60000000000")
	l := run("--wq-bucket-qps", "20", "--wq-basedelay", "5ms").limit()
	if l == nil || l.FailureCoolDown != time.Minute || l.BucketQPS != 20 || l.BaseDelay != 5*time.Millisecond || l.BucketSize != 500 || l.BackoffFactor != 1.5 {
		t.Errorf("limits %+v", l)
	}
	w := &wqFlags{}
	cmd := &cobra.Command{Use: "x"}
	w.add(cmd.Flags())
	for _, bad := range [][2]string{{"wq-bucket-size", "0"}, {"wq-basedelay", "-1"}, {"wq-backoff-factor", "fast"}} {
		if err := cmd.Flags().Set(bad[0], bad[1]); err == nil {
			t.Errorf("--%s %s was taken", bad[0], bad[1])
		}
	}
}
