// Package tags picks the tag an image should be updated to, from the tags
// a registry lists, as Argo CD Image Updater's update strategies do:
// semver (the default), newest-build (formerly latest), alphabetical
// (formerly name) and digest. It knows nothing of registries: callers
// pass the tags, and the build dates or digests the strategy needs.
//
//	res, err := tags.Select(list, tags.Options{Strategy: tags.Semver, Constraint: "1.x", Ignore: []string{"latest"}})
//	// res.Tag is the newest 1.x release; res.Considered lists what was weighed.
package tags

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/gobwas/glob"
)

// Strategy is how the next tag is chosen.
type Strategy string

// The strategies, with Argo CD Image Updater's names.
const (
	Semver       Strategy = "semver"
	NewestBuild  Strategy = "newest-build"
	Alphabetical Strategy = "alphabetical"
	Digest       Strategy = "digest"
)

// oldNames are the strategies' former names, still accepted.
var oldNames = map[string]Strategy{"latest": NewestBuild, "name": Alphabetical}

// ParseStrategy reads a strategy name; deprecated is true for a former
// name (latest, name). Empty is semver.
func ParseStrategy(s string) (st Strategy, deprecated bool, err error) {
	s = strings.TrimSpace(s)
	switch Strategy(s) {
	case "":
		return Semver, false, nil
	case Semver, NewestBuild, Alphabetical, Digest:
		return Strategy(s), false, nil
	}
	if st, ok := oldNames[s]; ok {
		return st, true, nil
	}
	return "", false, fmt.Errorf("unknown update strategy %q (want semver, newest-build, alphabetical or digest)", s)
}

// Tag is one tag of an image's repository.
type Tag struct {
	Name string
	// Created is the image's build date (newest-build needs it).
	Created time.Time
	// Digest is the manifest digest the tag points at (digest needs it).
	Digest string
}

// Filter decides which tags are considered at all.
type Filter struct {
	// Allow is Image Updater's allow-tags: "regexp:<expr>" or "any"
	// (or empty: every tag).
	Allow string
	// Ignore are glob patterns of tags never considered (ignore-tags).
	Ignore []string

	allow  *regexp.Regexp
	ignore []*glob.Pattern
}

// Compile checks the filter's patterns. Errors name the pattern.
func (f *Filter) Compile() error {
	switch a := strings.TrimSpace(f.Allow); {
	case a == "" || a == "any":
	case strings.HasPrefix(a, "regexp:"):
		re, err := regexp.Compile(strings.TrimPrefix(a, "regexp:"))
		if err != nil {
			return fmt.Errorf("allow-tags %q: %w", a, err)
		}
		f.allow = re
	default:
		return fmt.Errorf("allow-tags %q: want regexp:<expression> or any", a)
	}
	f.ignore = nil
	for _, p := range f.Ignore {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		g, err := glob.Compile(p)
		if err != nil {
			return fmt.Errorf("ignore-tags %q: %w", p, err)
		}
		f.ignore = append(f.ignore, g)
	}
	return nil
}

// Allows reports whether a tag passes the filter. Compile first.
func (f *Filter) Allows(tag string) bool {
	if f.allow != nil && !f.allow.MatchString(tag) {
		return false
	}
	for _, g := range f.ignore {
		if g.Match(tag) {
			return false
		}
	}
	return true
}

// Options configure Select.
type Options struct {
	Strategy Strategy
	// Constraint is the part after the image name in image-list: a semver
	// constraint ("1.x", "~1.2", "2.x-0" to allow pre-releases) for
	// semver, the tag to follow for digest; other strategies ignore it.
	Constraint string
	Filter     Filter
}

// Result is the chosen tag and how it was chosen.
type Result struct {
	// Tag is the chosen tag; nil when no tag qualifies.
	Tag *Tag
	// Considered are the tags that passed the filter and the strategy's
	// own rules, best last.
	Considered []string
	// Skipped counts the tags the filter or the strategy left out.
	Skipped int
	// Reason says in a sentence why Tag was chosen, or why none was.
	Reason string
}

// Select picks the tag to update to from the listed tags.
func Select(list []Tag, opts Options) (*Result, error) {
	if err := opts.Filter.Compile(); err != nil {
		return nil, err
	}
	var kept []Tag
	for _, t := range list {
		if opts.Filter.Allows(t.Name) {
			kept = append(kept, t)
		}
	}
	res := &Result{Skipped: len(list) - len(kept)}
	var err error
	switch opts.Strategy {
	case Semver, "":
		err = bySemver(kept, opts.Constraint, res)
	case NewestBuild:
		byBuildDate(kept, res)
	case Alphabetical:
		byName(kept, res)
	case Digest:
		byDigest(kept, opts.Constraint, res)
	default:
		err = fmt.Errorf("unknown update strategy %q", opts.Strategy)
	}
	if err != nil {
		return nil, err
	}
	if n := len(res.Considered); n > 0 && res.Tag == nil {
		for i := range kept {
			if kept[i].Name == res.Considered[n-1] {
				res.Tag = &kept[i]
			}
		}
	}
	return res, nil
}

// bySemver keeps the tags that are semantic versions meeting the
// constraint (a "v" prefix is allowed on either) and picks the highest.
func bySemver(list []Tag, constraint string, res *Result) error {
	var c *semver.Constraints
	if constraint = strings.TrimSpace(constraint); constraint != "" {
		var err error
		if c, err = semver.NewConstraint(constraint); err != nil {
			return fmt.Errorf("version constraint %q: %w", constraint, err)
		}
	}
	type version struct {
		tag string
		v   *semver.Version
	}
	var vs []version
	for _, t := range list {
		v, err := semver.NewVersion(t.Name)
		if err != nil || (c != nil && !c.Check(v)) || (c == nil && v.Prerelease() != "") {
			res.Skipped++
			continue
		}
		vs = append(vs, version{t.Name, v})
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].v.LessThan(vs[j].v) })
	for _, v := range vs {
		res.Considered = append(res.Considered, v.tag)
	}
	switch {
	case len(vs) == 0 && constraint != "":
		res.Reason = fmt.Sprintf("no tag is a semantic version meeting %q", constraint)
	case len(vs) == 0:
		res.Reason = "no tag is a semantic version"
	case constraint != "":
		res.Reason = fmt.Sprintf("%s is the highest version meeting %q", vs[len(vs)-1].tag, constraint)
	default:
		res.Reason = fmt.Sprintf("%s is the highest version", vs[len(vs)-1].tag)
	}
	return nil
}

// byBuildDate picks the most recently built image; among tags of the same
// build, the last by name, as Image Updater does.
func byBuildDate(list []Tag, res *Result) {
	sorted := append([]Tag(nil), list...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if !sorted[i].Created.Equal(sorted[j].Created) {
			return sorted[i].Created.Before(sorted[j].Created)
		}
		return sorted[i].Name < sorted[j].Name
	})
	for _, t := range sorted {
		res.Considered = append(res.Considered, t.Name)
	}
	if n := len(sorted); n > 0 {
		res.Reason = fmt.Sprintf("%s was built last (%s)", sorted[n-1].Name, sorted[n-1].Created.UTC().Format(time.RFC3339))
	} else {
		res.Reason = "no tag passes the filter"
	}
}

// byName picks the last tag in lexical order.
func byName(list []Tag, res *Result) {
	for _, t := range list {
		res.Considered = append(res.Considered, t.Name)
	}
	sort.Strings(res.Considered)
	if n := len(res.Considered); n > 0 {
		res.Reason = fmt.Sprintf("%s sorts last", res.Considered[n-1])
	} else {
		res.Reason = "no tag passes the filter"
	}
}

// byDigest follows one tag: the result is that tag with the digest the
// registry has now.
func byDigest(list []Tag, tag string, res *Result) {
	if tag = strings.TrimSpace(tag); tag == "" {
		tag = "latest"
	}
	for i := range list {
		if list[i].Name == tag {
			res.Considered = []string{tag}
			res.Tag = &list[i]
			res.Reason = fmt.Sprintf("%s points at %s", tag, list[i].Digest)
			return
		}
	}
	res.Reason = fmt.Sprintf("the registry has no tag %s", tag)
}
