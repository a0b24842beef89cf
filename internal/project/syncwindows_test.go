package project

import (
	"testing"
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func TestWindowActive(t *testing.T) {
	at := time.Date(2026, 3, 10, 10, 30, 0, 0, time.UTC) // a Tuesday
	for _, tc := range []struct {
		w    v1alpha1.SyncWindow
		want bool
	}{
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 10 * * *", Duration: "1h"}, true},
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 10 * * *", Duration: "30m"}, true},
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 10 * * *", Duration: "29m"}, false},
		{v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 11 * * *", Duration: "1h"}, false},
		{v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 22 * * 1", Duration: "13h"}, true},
		{v1alpha1.SyncWindow{Kind: "deny", Schedule: "@daily", Duration: "11h"}, true},
		// 10:00 in Tokyo is 01:00 UTC.
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 10 * * *", Duration: "1h", TimeZone: "Asia/Tokyo"}, false},
		{v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 19 * * *", Duration: "1h", TimeZone: "Asia/Tokyo"}, true},
	} {
		got, err := WindowActive(&tc.w, at)
		if err != nil || got != tc.want {
			t.Errorf("%+v at %s: %t (%v), want %t", tc.w, at, got, err, tc.want)
		}
	}
}

func TestValidateWindow(t *testing.T) {
	for _, w := range []v1alpha1.SyncWindow{
		{Kind: "maybe", Schedule: "* * * * *", Duration: "1h"},
		{Kind: "allow", Schedule: "not cron", Duration: "1h"},
		{Kind: "allow", Schedule: "* * * * *", Duration: "forever"},
		{Kind: "allow", Schedule: "* * * * *", Duration: "1h", TimeZone: "Mars/Olympus"},
		{Kind: "allow", Duration: "1h"},
	} {
		if err := ValidateWindow(&w); err == nil {
			t.Errorf("%+v was accepted", w)
		}
	}
}
