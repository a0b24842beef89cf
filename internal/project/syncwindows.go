package project

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Sync window kinds.
const (
	WindowAllow = "allow"
	WindowDeny  = "deny"
)

// scheduleParser reads a window's schedule as Argo CD does: five cron
// fields or a descriptor such as @daily.
var scheduleParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ValidateWindow checks a sync window's kind, schedule, duration and time
// zone, with Argo CD's messages.
func ValidateWindow(w *v1alpha1.SyncWindow) error {
	if w.Kind != WindowAllow && w.Kind != WindowDeny {
		return fmt.Errorf("kind has to be allow or deny, got '%s'", w.Kind)
	}
	if w.Schedule == "" {
		return fmt.Errorf("cannot have an empty schedule")
	}
	if w.Duration == "" {
		return fmt.Errorf("cannot have an empty duration")
	}
	if _, err := scheduleParser.Parse(w.Schedule); err != nil {
		return fmt.Errorf("cannot parse schedule '%s': %w", w.Schedule, err)
	}
	if _, err := time.ParseDuration(w.Duration); err != nil {
		return fmt.Errorf("cannot parse duration '%s': %w", w.Duration, err)
	}
	if _, err := time.LoadLocation(w.TimeZone); err != nil {
		return fmt.Errorf("cannot parse time zone '%s': %w", w.TimeZone, err)
	}
	return nil
}

// WindowActive reports whether a valid window is open at t: a start of
// its schedule (in its time zone, UTC by default) lies within its
// duration before t.
func WindowActive(w *v1alpha1.SyncWindow, t time.Time) (bool, error) {
	if err := ValidateWindow(w); err != nil {
		return false, err
	}
	schedule, _ := scheduleParser.Parse(w.Schedule)
	d, _ := time.ParseDuration(w.Duration)
	loc, _ := time.LoadLocation(w.TimeZone)
	t = t.In(loc)
	// The next start after t-d is at or before t: the window opened and
	// has not yet closed.
	next := schedule.Next(t.Add(-d - time.Second))
	return !next.After(t), nil
}
