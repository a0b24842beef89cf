package safetext

import (
	"strings"
	"testing"
	"text/template"
)

// TestAllocatingFunctionsAreBounded is a finding of the tenant review:
// Sprig's repeat and until allocated what a template asked before the
// output bound could stop them; now they, and their kin, refuse first.
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
		tmpl, err := template.New("t").Funcs(Funcs()).Parse(tc.tmpl)
		if err == nil {
			_, err = Execute(tmpl, nil, MaxString, "the output")
		}
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.tmpl, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: %v, want an error naming %s", tc.tmpl, err, tc.wantErr)
		}
	}
}
