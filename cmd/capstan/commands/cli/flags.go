package cli

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// retryFlags are Argo CD's sync retry flags (--retry-limit, …, or with the
// sync- prefix on app create and set).
type retryFlags struct {
	prefix                string
	limit, factor         int64
	duration, maxDuration time.Duration
	refresh               bool
}

func (r *retryFlags) add(fs *pflag.FlagSet, prefix string) {
	r.prefix = prefix
	fs.Int64Var(&r.limit, prefix+"limit", 0, "retry a failed sync this many times (0: no retries)")
	fs.DurationVar(&r.duration, prefix+"backoff-duration", 5*time.Second, "wait before the first retry")
	fs.Int64Var(&r.factor, prefix+"backoff-factor", 2, "multiply the wait by this after each retry")
	fs.DurationVar(&r.maxDuration, prefix+"backoff-max-duration", 3*time.Minute, "longest wait between retries")
	fs.BoolVar(&r.refresh, prefix+"refresh", false, "retry at once when the target revision changes")
}

// strategy is the retry strategy the flags give, nil when no retry flag
// was set.
func (r *retryFlags) strategy(fs *pflag.FlagSet) (*v1alpha1.RetryStrategy, error) {
	set := false
	for _, name := range []string{"limit", "backoff-duration", "backoff-factor", "backoff-max-duration", "refresh"} {
		set = set || fs.Changed(r.prefix+name)
	}
	if !set {
		return nil, nil
	}
	if r.limit < 0 || r.factor < 1 || r.duration < 0 || r.maxDuration < 0 {
		return nil, fmt.Errorf("--%slimit, --%sbackoff-* must not be negative and the factor must be at least 1", r.prefix, r.prefix)
	}
	factor := r.factor
	return &v1alpha1.RetryStrategy{Limit: r.limit, Refresh: r.refresh,
		Backoff: &v1alpha1.Backoff{Duration: r.duration.String(), Factor: &factor, MaxDuration: r.maxDuration.String()}}, nil
}
