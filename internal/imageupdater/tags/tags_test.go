package tags

import (
	"strings"
	"testing"
	"time"
)

func named(names ...string) []Tag {
	var out []Tag
	for _, n := range names {
		out = append(out, Tag{Name: n})
	}
	return out
}

func TestSelect(t *testing.T) {
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	built := []Tag{
		{Name: "latest", Created: day.Add(72 * time.Hour)},
		{Name: "a1b2c3d", Created: day},
		{Name: "f00ba47", Created: day.Add(48 * time.Hour)},
		{Name: "0123456", Created: day.Add(24 * time.Hour)},
		{Name: "main", Created: day.Add(48 * time.Hour)},
	}
	releases := named("1.0.0", "1.1.0", "1.2.0-rc1", "v1.1.5", "latest", "2.0.0", "3f2a9c1", "1.10.0")
	for _, tc := range []struct {
		name string
		list []Tag
		opts Options
		want string // "" when no tag qualifies
	}{
		{"semver picks the highest release", releases, Options{Strategy: Semver}, "2.0.0"},
		{"semver within a constraint, v prefix accepted", releases, Options{Constraint: "~1.1"}, "v1.1.5"},
		{"semver 1.x orders numerically", releases, Options{Constraint: "1.x"}, "1.10.0"},
		{"pre-releases only when the constraint asks", named("1.0.0", "1.2.0-rc1"), Options{Constraint: "1.x-0"}, "1.2.0-rc1"},
		{"no pre-release without a constraint", named("1.0.0", "1.2.0-rc1"), Options{}, "1.0.0"},
		{"production: semver, ignore latest", releases, Options{Strategy: Semver, Filter: Filter{Ignore: []string{"latest"}}}, "2.0.0"},
		{"nothing meets the constraint", releases, Options{Constraint: "5.x"}, ""},
		{"development: newest build of a commit SHA", built, Options{Strategy: NewestBuild,
			Filter: Filter{Allow: "regexp:^[0-9a-f]{5,40}$", Ignore: []string{"latest"}}}, "f00ba47"},
		{"newest build without filters takes latest", built, Options{Strategy: NewestBuild}, "latest"},
		{"same build date: the last name", []Tag{{Name: "b", Created: day}, {Name: "c", Created: day}, {Name: "a", Created: day}}, Options{Strategy: NewestBuild}, "c"},
		{"alphabetical for calver", named("2026-10-01", "2026-11-02", "2026-09-30", "dev"), Options{Strategy: Alphabetical,
			Filter: Filter{Allow: `regexp:^\d{4}-\d{2}-\d{2}$`}}, "2026-11-02"},
		{"ignore globs", named("1.0.0", "1.1.0", "1.1.1-debug"), Options{Strategy: Alphabetical, Filter: Filter{Ignore: []string{"*-debug", "1.1.*"}}}, "1.0.0"},
		{"digest follows one tag", []Tag{{Name: "latest", Digest: "sha256:aa"}, {Name: "1.0", Digest: "sha256:bb"}}, Options{Strategy: Digest, Constraint: "latest"}, "latest"},
		{"digest of a missing tag", named("1.0"), Options{Strategy: Digest, Constraint: "prod"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Select(tc.list, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if res.Tag != nil {
				got = res.Tag.Name
			}
			if got != tc.want || res.Reason == "" {
				t.Errorf("picked %q (%s), want %q; considered %v", got, res.Reason, tc.want, res.Considered)
			}
		})
	}
}

func TestSelectRejectsBadPatterns(t *testing.T) {
	for _, opts := range []Options{
		{Filter: Filter{Allow: "regexp:("}},
		{Filter: Filter{Allow: "^v1"}},
		{Filter: Filter{Ignore: []string{"[a-"}}},
		{Constraint: "not a constraint!"},
		{Strategy: "newest"},
	} {
		if _, err := Select(named("1.0.0"), opts); err == nil {
			t.Errorf("%+v: no error", opts)
		}
	}
}

func TestParseStrategy(t *testing.T) {
	for in, want := range map[string]Strategy{"": Semver, "semver": Semver, "latest": NewestBuild, "newest-build": NewestBuild,
		"name": Alphabetical, "alphabetical": Alphabetical, "digest": Digest} {
		got, deprecated, err := ParseStrategy(in)
		if err != nil || got != want || deprecated != (in == "latest" || in == "name") {
			t.Errorf("ParseStrategy(%q) = %q %t %v", in, got, deprecated, err)
		}
	}
	if _, _, err := ParseStrategy("newest"); err == nil || !strings.Contains(err.Error(), "unknown update strategy") {
		t.Errorf("an unknown strategy: %v", err)
	}
}
