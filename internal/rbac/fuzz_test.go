package rbac

import "testing"

// FuzzPolicy builds enforcers from arbitrary policy.csv text and asks
// them a question: a malformed line is an error naming it, never a panic.
func FuzzPolicy(f *testing.F) {
	for _, seed := range []string{
		"p, role:dev, applications, get, dev/*, allow\ng, alice, role:dev\n",
		"p, a, b\n", "g, x\n", "p, *, *, *, *, deny\n", "p, r, applications, *, [, allow\n", "# comment\n\n",
	} {
		f.Add(seed, "glob")
		f.Add(seed, "regex")
	}
	f.Fuzz(func(t *testing.T, csv, mode string) {
		e, err := New(Policy{CSV: csv, MatchMode: mode, Default: "role:readonly"})
		if err != nil {
			return
		}
		_ = e.Enforce([]string{"alice", "dev"}, "applications", "get", "dev/app")
	})
}
