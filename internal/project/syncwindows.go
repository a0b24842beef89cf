package project

import (
	"fmt"
	"slices"
	"time"

	"github.com/gobwas/glob"
	"github.com/robfig/cron/v3"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Sync window kinds.
const (
	WindowAllow = "allow"
	WindowDeny  = "deny"
)

// The messages Argo CD gives when a sync window keeps a sync from running.
const (
	// BlockedBySyncWindow is the API server's answer to a manual sync.
	BlockedBySyncWindow = "cannot sync: blocked by sync window"
	// OperationBlockedBySyncWindow is a requested operation's message
	// while it waits (Running) for its windows to allow it.
	OperationBlockedBySyncWindow = "Sync operation blocked by sync window"
)

// scheduleParser reads a window's schedule as Argo CD does: five cron
// fields, and also a descriptor such as @daily.
var scheduleParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ValidateWindow checks a sync window's kind, schedule and duration, with
// Argo CD's messages. An unknown time zone is not an error: as in Argo
// CD, the window then follows UTC.
func ValidateWindow(w *v1alpha1.SyncWindow) error {
	_, _, err := parseWindow(w)
	return err
}

// parseWindow reads a window's schedule and duration.
func parseWindow(w *v1alpha1.SyncWindow) (cron.Schedule, time.Duration, error) {
	if w.Kind != WindowAllow && w.Kind != WindowDeny {
		return nil, 0, fmt.Errorf("kind '%s' mismatch: can only be allow or deny", w.Kind)
	}
	if w.Schedule == "" {
		return nil, 0, fmt.Errorf("cannot have an empty schedule")
	}
	if w.Duration == "" {
		return nil, 0, fmt.Errorf("cannot have an empty duration")
	}
	schedule, err := scheduleParser.Parse(w.Schedule)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot parse schedule '%s': %w", w.Schedule, err)
	}
	d, err := time.ParseDuration(w.Duration)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot parse duration '%s': %w", w.Duration, err)
	}
	return schedule, d, nil
}

// windowLocation is a window's time zone; an empty or unknown one is UTC.
func windowLocation(w *v1alpha1.SyncWindow) *time.Location {
	if loc, err := time.LoadLocation(w.TimeZone); err == nil {
		return loc
	}
	return time.UTC
}

// WindowActive reports whether a window is open at t: a start of its
// schedule (on the wall clock of its time zone, UTC by default) lies
// within its duration before t.
func WindowActive(w *v1alpha1.SyncWindow, t time.Time) (bool, error) {
	start, _, err := lastStart(w, t)
	return err == nil && !start.IsZero(), err
}

// lastStart returns the start of the window's period that contains t
// (zero when the window is closed at t) and its next start after t.
func lastStart(w *v1alpha1.SyncWindow, t time.Time) (time.Time, time.Time, error) {
	schedule, d, err := parseWindow(w)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	t = t.In(windowLocation(w))
	next := schedule.Next(t)
	// The first start after t-d (so its period has not ended by t) that
	// is not after t: the window is open. A later start within the same
	// stretch matters not: this one already makes the window open.
	if start := schedule.Next(t.Add(-d)); !start.After(t) && start.Add(d).After(t) {
		return start, next, nil
	}
	return time.Time{}, next, nil
}

// Windows are the sync windows of a project that apply to one
// Application, in the project's order.
type Windows []*v1alpha1.SyncWindow

// MatchWindows returns the windows of proj that apply to app: those
// whose applications, namespaces or clusters globs match its name, its
// destination namespace or its destination cluster (server or name) —
// any of the lists set, or with andOperator every list set.
func MatchWindows(proj *v1alpha1.AppProject, app *v1alpha1.Application) Windows {
	if proj == nil {
		return nil
	}
	var out Windows
	dst := app.Spec.Destination
	for _, w := range proj.Spec.SyncWindows {
		if w != nil && windowMatches(w, app.Name, dst) {
			out = append(out, w)
		}
	}
	return out
}

// windowMatches decides one window for an Application.
func windowMatches(w *v1alpha1.SyncWindow, name string, dst v1alpha1.ApplicationDestination) bool {
	selectors := []struct {
		patterns []string
		matches  func(pattern string) bool
	}{
		{w.Applications, func(p string) bool { return GlobMatchAll(p, name) }},
		{w.Clusters, func(p string) bool {
			return (dst.Name != "" && GlobMatchAll(p, dst.Name)) || (dst.Server != "" && GlobMatchAll(p, dst.Server))
		}},
		{w.Namespaces, func(p string) bool { return GlobMatchAll(p, dst.Namespace) }},
	}
	anySet := false
	for _, s := range selectors {
		if len(s.patterns) == 0 {
			continue
		}
		anySet = true
		// Any selector decides a match when they are or'ed; with
		// andOperator any one decides a mismatch.
		if matched := slices.ContainsFunc(s.patterns, s.matches); matched != w.UseAndOperator {
			return matched
		}
	}
	return anySet && w.UseAndOperator
}

// GlobMatchAll matches value against a glob whose '*' spans every
// character, '/' included, so https://* matches a cluster's URL (as sync
// windows and the admin commands match clusters).
func GlobMatchAll(pattern, value string) bool {
	if pattern == "*" || pattern == value {
		return true
	}
	g, err := glob.Compile(pattern)
	return err == nil && g.Match(value)
}

// Active returns the windows open at t.
func (ws Windows) Active(t time.Time) (Windows, error) {
	return ws.filter(t, func(w *v1alpha1.SyncWindow, open bool) bool { return open })
}

// InactiveAllows returns the allow windows closed at t.
func (ws Windows) InactiveAllows(t time.Time) (Windows, error) {
	return ws.filter(t, func(w *v1alpha1.SyncWindow, open bool) bool { return w.Kind == WindowAllow && !open })
}

func (ws Windows) filter(t time.Time, keep func(w *v1alpha1.SyncWindow, open bool) bool) (Windows, error) {
	var out Windows
	for _, w := range ws {
		open, err := WindowActive(w, t)
		if err != nil {
			return nil, err
		}
		if keep(w, open) {
			out = append(out, w)
		}
	}
	return out, nil
}

// has reports whether a window of kind is among ws, and whether every
// such window allows manual syncs.
func (ws Windows) has(kind string) (found, manual bool) {
	manual = true
	for _, w := range ws {
		if w.Kind == kind {
			found = true
			manual = manual && w.ManualSync
		}
	}
	return found, found && manual
}

// CanSync decides, as Argo CD does, whether a sync may run at t under
// the windows that apply to its Application: an open deny window blocks
// it; otherwise an open allow window lets it run; otherwise allow
// windows that are all closed block it. A blocking window lets a manual
// sync through when every such window has manualSync. A window that
// cannot be read blocks every sync, with the error.
func (ws Windows) CanSync(manual bool, t time.Time) (bool, error) {
	if len(ws) == 0 {
		return true, nil
	}
	active, err := ws.Active(t)
	if err != nil {
		return false, fmt.Errorf("invalid sync windows: %w", err)
	}
	if deny, manualOK := active.has(WindowDeny); deny {
		return manual && manualOK, nil
	}
	if allow, _ := active.has(WindowAllow); allow {
		return true, nil
	}
	inactive, err := ws.InactiveAllows(t)
	if err != nil {
		return false, fmt.Errorf("invalid sync windows: %w", err)
	}
	if allow, manualOK := inactive.has(WindowAllow); allow {
		return manual && manualOK, nil
	}
	return true, nil
}

// NextChange returns when, after t, one of the windows next opens or
// closes: the moment to decide again about a sync they block. It is zero
// when no window can be read.
func (ws Windows) NextChange(t time.Time) time.Time {
	var next time.Time
	earlier := func(c time.Time) {
		if !c.IsZero() && c.After(t) && (next.IsZero() || c.Before(next)) {
			next = c
		}
	}
	for _, w := range ws {
		start, following, err := lastStart(w, t)
		if err != nil {
			continue
		}
		earlier(following)
		if !start.IsZero() {
			_, d, _ := parseWindow(w)
			earlier(start.Add(d))
		}
	}
	return next
}

// CanContinue decides whether a sync that started at started may go on
// at t (after an interrupted controller, or between its waves). It may
// when CanSync allows it, and also when every window that blocks it has
// syncOverrun and the sync began while it could run: an open deny window
// that opened after the sync started, or, with no allow window open at
// t, an allow window with syncOverrun that was open when it started.
func (ws Windows) CanContinue(manual bool, started, t time.Time) (bool, error) {
	ok, err := ws.CanSync(manual, t)
	if ok || err != nil || started.IsZero() || started.After(t) {
		return ok, err
	}
	if ok, _ := ws.CanSync(manual, started); !ok {
		return false, nil // it should not have started: no overrun
	}
	for _, w := range ws {
		if w.Kind != WindowDeny || (manual && w.ManualSync) {
			continue
		}
		start, _, _ := lastStart(w, t) // windows were read by CanSync
		if !start.IsZero() && (!w.SyncOverrun || !start.After(started)) {
			return false, nil
		}
	}
	active, _ := ws.Active(t)
	if allow, _ := active.has(WindowAllow); allow {
		return true, nil
	}
	atStart, _ := ws.Active(started)
	for _, w := range atStart {
		if w.Kind == WindowAllow && w.SyncOverrun {
			return true, nil
		}
	}
	inactive, _ := ws.InactiveAllows(t)
	found, manualOK := inactive.has(WindowAllow)
	return !found || (manual && manualOK), nil
}
