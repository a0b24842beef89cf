// Package keytests checks a setting registry of a test: each key a
// component acts on names the tests that show its behaviour, and those
// tests exist in the module. Keys whose tests only show that the value
// reaches its flag or option are listed apart, so the list of settings
// without a behavioural test is visible and only shrinks.
package keytests

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// testFunc finds top-level test functions.
var testFunc = regexp.MustCompile(`(?m)^func (Test\w+)\(`)

// skipped are directories of the module holding no Capstan tests.
var skipped = []string{".git", "bin", "tools", "node_modules", ".local"}

// Declared are the names of the module's test functions, read from the
// _test.go files under root (the module's directory).
func Declared(t testing.TB, root string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && slices.Contains(skipped, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) != ".go" || len(path) < 8 || path[len(path)-8:] != "_test.go" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllSubmatch(data, -1) {
			out[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Check checks tests, the tests of each key, against actedOn, the keys
// acted on: every one has at least one test, no other key is listed,
// every test named is declared under root, and every key of wiringOnly
// (tests that show the value taken, not its effect) is one of them.
func Check(t testing.TB, root string, actedOn []string, tests map[string][]string, wiringOnly []string) {
	t.Helper()
	declared := Declared(t, root)
	for _, key := range actedOn {
		if len(tests[key]) == 0 {
			t.Errorf("%s is acted on, but no test is named for it", key)
		}
	}
	for key, names := range tests {
		if !slices.Contains(actedOn, key) {
			t.Errorf("%s has tests named, but is not a key acted on", key)
		}
		for _, name := range names {
			if !declared[name] {
				t.Errorf("%s: no test %s in the module", key, name)
			}
		}
	}
	for _, key := range wiringOnly {
		if _, ok := tests[key]; !ok {
			t.Errorf("%s is listed as tested for its wiring only, but has no tests named", key)
		}
	}
	t.Logf("%d keys acted on, each with its tests; %d of them tested for their wiring only", len(actedOn), len(wiringOnly))
}
