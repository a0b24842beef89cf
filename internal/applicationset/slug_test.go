package applicationset

import "testing"

func TestSlugOf(t *testing.T) {
	for branch, want := range map[string]string{
		"feature/Add_Login":   "feature-add-login",
		"  Fix: the #42 bug ": "fix-the-42-bug",
		"émoji-ünïcode":       "emoji-unicode",
		"renovate/very-long-dependency-name-that-goes-on-and-on-and-on":      "renovate-very-long-dependency-name-that-goes-on",
		"averyveryveryveryveryveryveryveryveryveryverylongwordwithoutdashes": "averyveryveryveryveryveryveryveryveryveryverylongw",
	} {
		if got := slugOf(branch); got != want {
			t.Errorf("slugOf(%q) = %q, want %q", branch, got, want)
		}
	}
}
