package component

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/capstan-cd/capstan/internal/applicationset"
)

// wqFlags are Argo CD's --wq-* flags of the ApplicationSet controller's
// queue (applicationsetcontroller.wq.*). Unless one is given, the queue
// keeps controller-runtime's limiter; once one is, Argo CD's limiter runs
// with Argo CD's defaults for the others.
type wqFlags struct {
	limits applicationset.WorkqueueRateLimit
	given  bool
}

func (w *wqFlags) add(fl *pflag.FlagSet) {
	w.limits = applicationset.DefaultWorkqueueRateLimit()
	l := &w.limits
	fl.Var(given{&int64Value{&l.BucketSize}, &w.given}, "wq-bucket-size", "queue rate limiter: token bucket size")
	fl.Var(given{&float64Value{&l.BucketQPS}, &w.given}, "wq-bucket-qps", "queue rate limiter: token bucket rate a second, the largest number for no limit")
	fl.Var(given{&nsDuration{&l.FailureCoolDown}, &w.given}, "wq-cooldown", "queue rate limiter: quiet time after which a failed ApplicationSet's backoff starts over, 0 for no backoff")
	fl.Var(given{&nsDuration{&l.BaseDelay}, &w.given}, "wq-basedelay", "queue rate limiter: first retry's wait")
	fl.Var(given{&nsDuration{&l.MaxDelay}, &w.given}, "wq-maxdelay", "queue rate limiter: longest retry wait")
	fl.Var(given{&float64Value{&l.BackoffFactor}, &w.given}, "wq-backoff-factor", "queue rate limiter: growth of each retry's wait")
}

// limit is Argo CD's limiter when a --wq-* flag (or its variable) was
// given, else nil.
func (w *wqFlags) limit() *applicationset.WorkqueueRateLimit {
	if !w.given {
		return nil
	}
	l := w.limits
	return &l
}

// given marks, through its flag, that the flag was set.
type given struct {
	pflag.Value
	set *bool
}

func (g given) Set(s string) error {
	*g.set = true
	return g.Value.Set(s)
}

// nsDuration is a duration written as Go writes one ("1ms") or, as Argo
// CD's *_NS variables hold it, as nanoseconds.
type nsDuration struct{ d *time.Duration }

func (v *nsDuration) String() string {
	if v.d == nil {
		return "0s"
	}
	return v.d.String()
}
func (v *nsDuration) Type() string { return "duration" }
func (v *nsDuration) Set(s string) error {
	if ns, err := strconv.ParseInt(s, 10, 64); err == nil {
		*v.d = time.Duration(ns)
	} else if d, err := time.ParseDuration(s); err == nil {
		*v.d = d
	} else {
		return fmt.Errorf("%q is neither a duration (1ms) nor nanoseconds", s)
	}
	if *v.d < 0 {
		return fmt.Errorf("%q is negative", s)
	}
	return nil
}

type int64Value struct{ p *int64 }

func (v *int64Value) String() string { return strconv.FormatInt(*v.p, 10) }
func (v *int64Value) Type() string   { return "int64" }
func (v *int64Value) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return fmt.Errorf("%q: want a whole number of 1 or more", s)
	}
	*v.p = n
	return nil
}

type float64Value struct{ p *float64 }

func (v *float64Value) String() string { return strconv.FormatFloat(*v.p, 'g', -1, 64) }
func (v *float64Value) Type() string   { return "float64" }
func (v *float64Value) Set(s string) error {
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 1 {
		return fmt.Errorf("%q: want a number of 1 or more", s)
	}
	*v.p = n
	return nil
}
