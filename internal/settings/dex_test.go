package settings

import (
	"github.com/capstan-cd/capstan/internal/testing/localcluster"

	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func TestDexConfig(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ServerSecretName, Namespace: ns},
		Data: map[string][]byte{"server.secretkey": []byte("k3y"), "dex.github.clientSecret": []byte("gh-secret")}}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: CMName, Namespace: ns}, Data: map[string]string{"url": "https://cd.example.com/"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if out, err := DexConfig(ctx, c, ns, DexServe{}); err != nil || out != nil {
		t.Fatalf("without dex.config: %s, %v; want nothing", out, err)
	}

	cm.Data["additionalUrls"] = "- https://cd.internal.example.com/\n"
	cm.Data["dex.config"] = `
connectors:
- type: github
  id: github
  name: GitHub
  config: {clientID: gh, clientSecret: $dex.github.clientSecret}
- type: mockCallback
  id: mock
  name: Mock
staticPasswords:
- {email: admin@example.com, hash: "$2a$10$2b2cU8CPhOTaGrs1HRQuAueS7JTT5ZHsHSzYiFPm1leZck7Mc8T4W"}
staticClients:
- {id: grafana, name: Grafana, secret: s}
oauth2: {skipApprovalScreen: false}
`
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	out, err := DexConfig(ctx, c, ns, DexServe{TLSCert: "/tmp/tls.crt", TLSKey: "/tmp/tls.key"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Issuer string         `json:"issuer"`
		Web    map[string]any `json:"web"`
		GRPC   map[string]any `json:"grpc"`
		OAuth2 map[string]any `json:"oauth2"`
		Conns  []struct {
			Type   string         `json:"type"`
			Config map[string]any `json:"config"`
		} `json:"connectors"`
		Clients []struct {
			ID           string   `json:"id"`
			Secret       string   `json:"secret"`
			Public       bool     `json:"public"`
			RedirectURIs []string `json:"redirectURIs"`
		} `json:"staticClients"`
		Passwords []map[string]string `json:"staticPasswords"`
	}
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"issuer", got.Issuer, "https://cd.example.com/api/dex"},
		{"web", got.Web["https"], "0.0.0.0:5556"},
		{"web certificate", got.Web["tlsCert"], "/tmp/tls.crt"},
		{"gRPC", got.GRPC["addr"], "0.0.0.0:5557"},
		{"the user's approval screen setting", got.OAuth2["skipApprovalScreen"], false},
		{"clients", len(got.Clients), 3},
		{"first client", got.Clients[0].ID, DexClientID},
		{"its secret", got.Clients[0].Secret, DexClientSecret([]byte("k3y"))},
		{"its redirects, url's and additionalUrls'", strings.Join(got.Clients[0].RedirectURIs, " "), "https://cd.example.com/auth/callback https://cd.internal.example.com/auth/callback"},
		{"the CLI's client", got.Clients[1].ID + " public " + map[bool]string{true: "yes", false: "no"}[got.Clients[1].Public], DexCLIClientID + " public yes"},
		{"the user's client", got.Clients[2].ID, "grafana"},
		{"GitHub's redirect", got.Conns[0].Config["redirectURI"], "https://cd.example.com/api/dex/callback"},
		{"GitHub's secret from argocd-secret", got.Conns[0].Config["clientSecret"], "gh-secret"},
		{"a connector without redirect", got.Conns[1].Config == nil, true},
		{"a bcrypt hash is no reference", got.Passwords[0]["hash"], "$2a$10$2b2cU8CPhOTaGrs1HRQuAueS7JTT5ZHsHSzYiFPm1leZck7Mc8T4W"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}

	sso, err := LoadSSO(ctx, c, ns)
	if err != nil || !sso.Dex || sso.OIDC.Issuer != got.Issuer || sso.OIDC.ClientSecret != DexClientSecret([]byte("k3y")) {
		t.Errorf("LoadSSO with dex.config: %+v, %v", sso, err)
	}

	cm.Data["dex.config"] = "connectors: []\n"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if _, err := DexConfig(ctx, c, ns, DexServe{}); err == nil || !strings.Contains(err.Error(), "no connectors") {
		t.Errorf("dex.config without connectors: %v", err)
	}
}

// The API server and Dex derive the argo-cd client's secret from the same
// server key (argocd-secret's server.secretkey), each on its own.
func ExampleDexClientSecret() {
	fmt.Println(DexClientSecret([]byte("server-key")))
	// Output: DnSSsq7IMoFpPXYlyWYDcHO-z5uG3E0Mgne7Q5S3
}
