package git

import "testing"

func TestResolveConstraint(t *testing.T) {
	refs := Refs{
		"refs/tags/v1.0.0":               "a",
		"refs/tags/v1.2.0":               "b",
		"refs/tags/1.3.0-rc.1":           "c",
		"refs/tags/v2.0.0":               "d",
		"refs/tags/not-a-version":        "e",
		"refs/tags/component-b/1.0.0":    "f",
		"refs/tags/component-b/1.0.1":    "g",
		"refs/tags/component-b/2.0.0":    "h",
		"refs/heads/main":                "i",
		"refs/tags/component-a/1.0.9":    "j",
		"refs/tags/component-b/bad-name": "k",
	}
	for _, tc := range []struct {
		revision, prefix string
		wantTag, wantSHA string
	}{
		{"1.*", "", "v1.2.0", "b"},
		{">=1.0 <2.0", "", "v1.2.0", "b"},
		{"*", "", "v2.0.0", "d"},
		{"1.0.*", "component-b/", "component-b/1.0.1", "g"},
		{"~1", "component-b/", "component-b/1.0.1", "g"},
		{"3.*", "", "", ""},    // nothing satisfies it
		{"v1.2.0", "", "", ""}, // a version is a tag name, not a range
		{"main", "", "", ""},   // not a constraint
		{"1.0.*", "component-c/", "", ""},
	} {
		tag, sha, ok := refs.ResolveConstraint(tc.revision, tc.prefix)
		if tag != tc.wantTag || sha != tc.wantSHA || ok != (tc.wantTag != "") {
			t.Errorf("ResolveConstraint(%q, %q) = %q %q %v, want %q %q", tc.revision, tc.prefix, tag, sha, ok, tc.wantTag, tc.wantSHA)
		}
	}
}
