package safetext

import (
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"guestbook", 20, "guestbook"},
		{"guestbook", 9, "guestbook"},
		{"guestbook", 5, "guest…"},
		{"ゲストブック", 7, "ゲス…"}, // 3 bytes a character: not cut inside one
		{"abc", 0, "…"},
		{"abc", -1, "…"},
	} {
		got := Truncate(tc.s, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
