package project

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func TestWindowActive(t *testing.T) {
	at := time.Date(2026, 3, 10, 10, 30, 0, 0, time.UTC) // a Tuesday
	for _, tc := range []struct {
		w    v1alpha1.SyncWindow
		want bool
	}{
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 10 * * *", Duration: "1h"}, true},
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 10 * * *", Duration: "31m"}, true},
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 10 * * *", Duration: "30m"}, false}, // closed at 10:30
		{v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 11 * * *", Duration: "1h"}, false},
		{v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 22 * * 1", Duration: "13h"}, true},
		{v1alpha1.SyncWindow{Kind: "deny", Schedule: "@daily", Duration: "11h"}, true},
		// 10:00 in Tokyo is 01:00 UTC.
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 10 * * *", Duration: "1h", TimeZone: "Asia/Tokyo"}, false},
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 19 * * *", Duration: "1h", TimeZone: "Asia/Tokyo"}, true},
		// An unknown time zone is UTC, as in Argo CD.
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 10 * * *", Duration: "1h", TimeZone: "Mars/Olympus"}, true},
		// Every minute for an hour: open at a minute's start too, when the
		// start an hour ago has just closed.
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "* * * * *", Duration: "1h"}, true},
	} {
		for _, when := range []time.Time{at, at.Add(700 * time.Millisecond)} {
			got, err := WindowActive(&tc.w, when)
			if err != nil || got != tc.want {
				t.Errorf("%+v at %s: %t (%v), want %t", tc.w, when, got, err, tc.want)
			}
		}
	}
}

func TestValidateWindow(t *testing.T) {
	for _, tc := range []struct {
		w    v1alpha1.SyncWindow
		want string
	}{
		{v1alpha1.SyncWindow{Kind: "maybe", Schedule: "* * * * *", Duration: "1h"}, "kind 'maybe' mismatch: can only be allow or deny"},
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "not cron", Duration: "1h"}, "cannot parse schedule 'not cron': expected exactly 5 fields, found 2: [not cron]"},
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "* * * * *", Duration: "forever"}, `cannot parse duration 'forever': time: invalid duration "forever"`},
		{v1alpha1.SyncWindow{Kind: "allow", Duration: "1h"}, "cannot have an empty schedule"},
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "* * * * *", Duration: "1h", TimeZone: "Mars/Olympus"}, ""},
	} {
		err := ValidateWindow(&tc.w)
		if got := fmt.Sprint(err); (err == nil && tc.want != "") || (err != nil && got != tc.want) {
			t.Errorf("%+v: %v, want %q", tc.w, err, tc.want)
		}
	}
}

func TestMatchWindows(t *testing.T) {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook"}, Spec: v1alpha1.ApplicationSpec{
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "prod"}}}
	for _, tc := range []struct {
		name string
		w    v1alpha1.SyncWindow
		want bool
	}{
		{"app glob", v1alpha1.SyncWindow{Applications: []string{"guest*"}}, true},
		{"other app", v1alpha1.SyncWindow{Applications: []string{"billing"}}, false},
		{"cluster URL glob spans slashes", v1alpha1.SyncWindow{Clusters: []string{"https://*"}}, true},
		{"namespace", v1alpha1.SyncWindow{Namespaces: []string{"prod"}}, true},
		{"no selector", v1alpha1.SyncWindow{}, false},
		{"any selector matches", v1alpha1.SyncWindow{Applications: []string{"billing"}, Namespaces: []string{"prod"}}, true},
		{"and: one selector fails", v1alpha1.SyncWindow{Applications: []string{"billing"}, Namespaces: []string{"prod"}, UseAndOperator: true}, false},
		{"and: every set selector matches", v1alpha1.SyncWindow{Applications: []string{"guestbook"}, Namespaces: []string{"p*"}, UseAndOperator: true}, true},
	} {
		proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SyncWindows: v1alpha1.SyncWindows{&tc.w}}}
		if got := len(MatchWindows(proj, app)) == 1; got != tc.want {
			t.Errorf("%s: matched %t, want %t", tc.name, got, tc.want)
		}
	}
}

func TestCanSync(t *testing.T) {
	at := time.Date(2026, 3, 10, 10, 30, 0, 0, time.UTC)
	open := func(kind string, manual bool) *v1alpha1.SyncWindow {
		return &v1alpha1.SyncWindow{Kind: kind, Schedule: "0 10 * * *", Duration: "1h", ManualSync: manual}
	}
	closed := func(kind string, manual bool) *v1alpha1.SyncWindow {
		return &v1alpha1.SyncWindow{Kind: kind, Schedule: "0 22 * * *", Duration: "1h", ManualSync: manual}
	}
	for _, tc := range []struct {
		name                string
		ws                  Windows
		automated, manually bool
	}{
		{"no windows", nil, true, true},
		{"open deny", Windows{open(WindowDeny, false)}, false, false},
		{"open deny with manual sync", Windows{open(WindowDeny, true)}, false, true},
		{"open deny beats open allow", Windows{open(WindowAllow, false), open(WindowDeny, false)}, false, false},
		{"open allow", Windows{open(WindowAllow, false), closed(WindowAllow, false)}, true, true},
		{"closed allow", Windows{closed(WindowAllow, false)}, false, false},
		{"closed allow with manual sync", Windows{closed(WindowAllow, true)}, false, true},
		{"closed allows, one without manual sync", Windows{closed(WindowAllow, true), closed(WindowAllow, false)}, false, false},
		{"closed deny", Windows{closed(WindowDeny, false)}, true, true},
	} {
		automated, err := tc.ws.CanSync(false, at)
		manually, err2 := tc.ws.CanSync(true, at)
		if err != nil || err2 != nil || automated != tc.automated || manually != tc.manually {
			t.Errorf("%s: automated %t, manual %t (%v %v); want %t, %t", tc.name, automated, manually, err, err2, tc.automated, tc.manually)
		}
	}
	bad := Windows{{Kind: WindowAllow, Schedule: "never", Duration: "1h"}}
	if ok, err := bad.CanSync(true, at); ok || err == nil {
		t.Errorf("a window that cannot be read: %t, %v; want blocked with an error", ok, err)
	}
}

func TestNextChange(t *testing.T) {
	at := time.Date(2026, 3, 10, 10, 30, 0, 0, time.UTC)
	ws := Windows{
		{Kind: WindowDeny, Schedule: "0 10 * * *", Duration: "45m"}, // closes at 10:45
		{Kind: WindowAllow, Schedule: "0 12 * * *", Duration: "1h"}, // opens at 12:00
	}
	if got, want := ws.NextChange(at), time.Date(2026, 3, 10, 10, 45, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next change %s, want %s", got, want)
	}
	if got, want := ws[1:].NextChange(at), time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next change %s, want %s", got, want)
	}
}

// A deny window over the nightly batch, with manual syncs still allowed.
func ExampleWindows_CanSync() {
	proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SyncWindows: v1alpha1.SyncWindows{
		{Kind: WindowDeny, Schedule: "0 22 * * *", Duration: "8h", Namespaces: []string{"prod-*"}, ManualSync: true},
	}}}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "billing"},
		Spec: v1alpha1.ApplicationSpec{Destination: v1alpha1.ApplicationDestination{Namespace: "prod-eu"}}}
	night := time.Date(2026, 3, 10, 23, 0, 0, 0, time.UTC)
	ws := MatchWindows(proj, app)
	automated, _ := ws.CanSync(false, night)
	manual, _ := ws.CanSync(true, night)
	fmt.Println(len(ws), automated, manual)
	// Output: 1 false true
}

func TestCanContinue(t *testing.T) {
	started := time.Date(2026, 3, 10, 9, 50, 0, 0, time.UTC)
	at := time.Date(2026, 3, 10, 10, 30, 0, 0, time.UTC)
	window := func(kind, schedule, duration string, overrun bool) *v1alpha1.SyncWindow {
		return &v1alpha1.SyncWindow{Kind: kind, Schedule: schedule, Duration: duration, SyncOverrun: overrun}
	}
	for _, tc := range []struct {
		name string
		ws   Windows
		want bool
	}{
		{"no windows", nil, true},
		{"deny opened after the start, with overrun", Windows{window(WindowDeny, "0 10 * * *", "1h", true)}, true},
		{"deny opened after the start, without overrun", Windows{window(WindowDeny, "0 10 * * *", "1h", false)}, false},
		{"deny open since before the start", Windows{window(WindowDeny, "0 9 * * *", "3h", true)}, false},
		{"allow that closed after the start, with overrun", Windows{window(WindowAllow, "0 9 * * *", "1h", true)}, true},
		{"allow that closed after the start, without overrun", Windows{window(WindowAllow, "0 9 * * *", "1h", false)}, false},
		{"allow closed at the start", Windows{window(WindowAllow, "0 22 * * *", "1h", true)}, false},
		{"overrun allow, but a deny opened without overrun", Windows{
			window(WindowAllow, "0 9 * * *", "1h", true), window(WindowDeny, "0 10 * * *", "1h", false)}, false},
	} {
		got, err := tc.ws.CanContinue(false, started, at)
		if err != nil || got != tc.want {
			t.Errorf("%s: %t, %v; want %t", tc.name, got, err, tc.want)
		}
	}
}
