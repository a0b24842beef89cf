package githubapp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/githubapp"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

func TestClient(t *testing.T) {
	app := scmserver.NewGitHubApp(t, 7, 70)
	org := scmserver.GitHubOrg(t, "unused", "shop", scmserver.Repo{Name: "web", DefaultBranch: "main", Branches: map[string]string{"main": "abc"}})
	org.InstallApp(app)
	other := scmserver.NewGitHubApp(t, 8, 80) // a key GitHub does not know
	tests := []struct {
		name    string
		app     githubapp.App
		wantErr string
	}{
		{"installation looked up", githubapp.App{ID: app.ID, PrivateKey: app.PrivateKeyPEM}, ""},
		{"installation given", githubapp.App{ID: app.ID, InstallationID: app.InstallationID, PrivateKey: app.PrivateKeyPEM}, ""},
		{"enterprise address from the credentials", githubapp.App{ID: app.ID, PrivateKey: app.PrivateKeyPEM, EnterpriseBaseURL: org.URL}, ""},
		{"unknown key", githubapp.App{ID: other.ID, PrivateKey: other.PrivateKeyPEM}, "finding its installation on shop"},
		{"no key", githubapp.App{ID: app.ID}, "needs its ID and private key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := org.URL
			if tt.app.EnterpriseBaseURL != "" {
				api = ""
			}
			c, err := githubapp.Client(context.Background(), tt.app, api, "shop", nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Get(org.URL + "repos/shop/web/branches")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("a call as the installation: %s", resp.Status)
			}
		})
	}
}

func TestToken(t *testing.T) {
	app := scmserver.NewGitHubApp(t, 9, 90)
	org := scmserver.GitHubOrg(t, "unused", "shop")
	org.InstallApp(app)
	creds := githubapp.App{ID: app.ID, InstallationID: app.InstallationID, PrivateKey: app.PrivateKeyPEM, EnterpriseBaseURL: org.URL}
	for range 2 { // the second from the cache
		token, err := githubapp.Token(context.Background(), creds)
		if err != nil || token != "ghs_installation_90" {
			t.Fatalf("token %q, %v", token, err)
		}
	}
	for _, bad := range []githubapp.App{{ID: app.ID, PrivateKey: app.PrivateKeyPEM, EnterpriseBaseURL: org.URL},
		{ID: app.ID, InstallationID: 91, PrivateKey: app.PrivateKeyPEM, EnterpriseBaseURL: org.URL}} {
		if _, err := githubapp.Token(context.Background(), bad); err == nil {
			t.Errorf("a token for %+v", bad.InstallationID)
		}
	}
}
