package safetext

import (
	"runtime"
	"strings"
	"testing"
)

// TestAllocatingFunctionsAreBounded is a finding of the first tenant
// review: Sprig's repeat and until allocated what a template asked before
// the output bound could stop them; now they, and their kin, refuse first.
func TestAllocatingFunctionsAreBounded(t *testing.T) {
	for _, tc := range []struct{ tmpl, wantErr string }{
		{`{{ repeat 1000000000 "x" | len }}`, "repeat"},
		{`{{ range until 1000000000 }}{{ end }}`, "until"},
		{`{{ range untilStep -9000000000000000000 9000000000000000000 1 }}{{ end }}`, "untilStep"},
		{`{{ seq 1 1000000000 | len }}`, "seq"},
		{`{{ indent 1000000000 "x" | len }}`, "indent"},
		{`{{ randAlphaNum 1000000000 | len }}`, "randAlphaNum"},
		{`{{ genPrivateKey "rsa" }}`, "genPrivateKey"},
		{`{{ env "HOME" }}`, "env"},
		{`{{ repeat 3 "ab" }}{{ range until 2 }}.{{ end }}{{ seq 3 }}{{ indent 2 "x" }}`, ""},
	} {
		_, err := run(tc.tmpl, nil, MaxString)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.tmpl, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: %v, want an error naming %s", tc.tmpl, err, tc.wantErr)
		}
	}
}

// TestBuiltStringsAreBounded is finding N7 of the second tenant review:
// strings built in variables (printf's widths, print and cat doubling a
// variable, replace and join multiplying one) grew to 80 MB behind a 1 KiB
// output bound. Each is refused now, and the execution allocates no more
// than a small multiple of its budget.
func TestBuiltStringsAreBounded(t *testing.T) {
	const max = 1 << 10
	for _, tc := range []struct{ name, tmpl string }{
		{"printf widths", `{{ $x := printf "%0999999d%0999999d%0999999d" 1 2 3 }}{{ len $x }}`},
		{"printf star width", `{{ $x := printf "%*d" 999999 1 }}{{ $y := printf "%*d" -999999 1 }}{{ len $x }}`},
		{"printf precision", `{{ $x := printf "%.999999f" 1.0 }}{{ len $x }}`},
		{"print doubling", `{{ $x := "ab" }}{{ range until 40 }}{{ $x = print $x $x }}{{ end }}{{ len $x }}`},
		{"cat doubling", `{{ $x := "ab" }}{{ range until 40 }}{{ $x = cat $x $x }}{{ end }}{{ len $x }}`},
		{"println doubling", `{{ $x := "ab" }}{{ range until 40 }}{{ $x = println $x $x }}{{ end }}{{ len $x }}`},
		{"replace every character", `{{ $x := "abcdefghij" }}{{ range until 8 }}{{ $x = replace "" $x $x }}{{ end }}{{ len $x }}`},
		{"join with a long separator", `{{ $x := "ab" }}{{ range until 30 }}{{ $x = join $x (list 1 2 3) }}{{ end }}{{ len $x }}`},
		{"regex expansion", `{{ $x := "abcd" }}{{ range until 20 }}{{ $x = regexReplaceAll "(.*)" $x "${1}${1}${1}" }}{{ end }}{{ len $x }}`},
		{"list doubling", `{{ $x := list 1 }}{{ range until 40 }}{{ $x = concat $x $x }}{{ end }}{{ len $x }}`},
		{"dict filling", `{{ $d := dict }}{{ range $i := until 100000 }}{{ $_ := set $d (toString $i) "xxxxxxxxxxxxxxxx" }}{{ end }}{{ len $d }}`},
		{"wrapWith", `{{ $x := wrapWith 1 (repeat 500 "-") (repeat 500 "x") }}{{ len $x }}`},
		{"nested ranges", `{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`},
		{"range over a number", `{{ range 100000000 }}{{ end }}`},
		{"recursive template", `{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}`},
		{"toJson doubling", `{{ $x := list "ab" }}{{ range until 40 }}{{ $x = list (toJson $x) (toJson $x) }}{{ end }}{{ len $x }}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			allocated := allocatedBy(func() { _, err = run(tc.tmpl, nil, max) })
			if err == nil {
				t.Errorf("%s ran to the end", tc.tmpl)
			}
			if limit := uint64(64*Budget(max)) + 4<<20; allocated > limit {
				t.Errorf("%s allocated %d bytes, over %d: %v", tc.tmpl, allocated, limit, err)
			}
		})
	}
}

// TestOrdinaryTemplatesRun: what notifications, deep links and
// ApplicationSets write runs as before.
func TestOrdinaryTemplatesRun(t *testing.T) {
	data := map[string]any{"app": map[string]any{"name": "guestbook", "images": []any{"nginx:1.25", "redis:7"}}}
	for tmpl, want := range map[string]string{
		`{{ .app.name | upper }}`:                                                 "GUESTBOOK",
		`{{ printf "%s-%05d" .app.name 7 }}`:                                      "guestbook-00007",
		`{{ range $i, $img := .app.images }}{{ $i }}={{ $img }};{{ end }}`:        "0=nginx:1.25;1=redis:7;",
		`{{ toJson .app.images }}`:                                                `["nginx:1.25","redis:7"]`,
		`{{ join "," .app.images }}`:                                              "nginx:1.25,redis:7",
		`{{ define "x" }}[{{ . }}]{{ end }}{{ template "x" .app.name }}`:          "[guestbook]",
		`{{ $d := dict "a" 1 }}{{ $_ := set $d "b" 2 }}{{ keys $d | sortAlpha }}`: "[a b]",
		`{{ replace "-" "_" "a-b-c" }}{{ print 1 2 }}{{ html "<" }}`:              "a_b_c1 2&lt;",
	} {
		if got, err := run(tmpl, data, 1<<10); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", tmpl, got, err, want)
		}
	}
	if _, err := Parse("t", "{{ . }}", nil, "missingkey=nonsense"); err == nil {
		t.Error("an unknown option was taken")
	}
}

func run(tmpl string, data any, max int) (string, error) {
	t, err := Parse("t", tmpl, nil)
	if err != nil {
		return "", err
	}
	return t.Execute(data, max, "the output")
}

// allocatedBy is how many bytes fn allocated.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// FuzzGrowth runs templates of up to 1 KiB with a 1 KiB output bound:
// none may allocate more than a fixed multiple of that bound, whatever it
// builds, keeps in variables or loops over.
func FuzzGrowth(f *testing.F) {
	for _, seed := range []string{
		`{{ $x := "ab" }}{{ range until 40 }}{{ $x = print $x $x }}{{ end }}`,
		`{{ printf "%0999999d" 1 }}`,
		`{{ replace "" "xx" (repeat 1000 "y") }}`,
		`{{ range 100000 }}{{ end }}`,
		`{{ range $i := until 100 }}{{ range until 100 }}{{ cat $i }}{{ end }}{{ end }}`,
		`{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}`,
		`{{ .name | upper | quote }}`,
	} {
		f.Add(seed)
	}
	const max = 1 << 10
	f.Fuzz(func(t *testing.T, tmpl string) {
		if len(tmpl) > 1<<10 {
			return
		}
		var err error
		allocated := allocatedBy(func() { _, err = run(tmpl, map[string]any{"name": "guestbook"}, max) })
		if limit := uint64(64*Budget(max)) + 4<<20; allocated > limit {
			t.Errorf("%q allocated %d bytes, over %d (%v)", tmpl, allocated, limit, err)
		}
	})
}
