package cli

import (
	"strings"
	"testing"
)

func TestParseEnvOpts(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		{in: "", want: map[string]string{}},
		{in: "--grpc-web", want: map[string]string{"grpc-web": "true"}},
		{in: "--grpc-web --server argocd.example.com:443 --insecure", want: map[string]string{"grpc-web": "true", "server": "argocd.example.com:443", "insecure": "true"}},
		{in: "--header 'X-Team: a b' --plaintext=false", want: map[string]string{"header": "X-Team: a b", "plaintext": "false"}},
		{in: "server", wantErr: `"server" is not a --flag`},
		{in: "--header 'unclosed", wantErr: "ARGOCD_OPTS"},
		{in: "--x " + strings.Repeat("y", maxEnvOpts), wantErr: "longer than"},
	} {
		got, err := parseEnvOpts(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: %s = %q, want %q", tc.in, k, got[k], v)
			}
		}
	}
}
