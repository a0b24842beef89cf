package cloudauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/cloudauth"
	"github.com/capstan-cd/capstan/internal/testing/stsserver"
	"github.com/capstan-cd/capstan/internal/testing/tokenserver"
)

func TestGoogle(t *testing.T) {
	ts := tokenserver.New(t)
	src := cloudauth.New(cloudauth.Options{HTTPClient: ts.Client()})
	email, token, err := src.Google(context.Background(), ts.GoogleKey)
	if err != nil {
		t.Fatal(err)
	}
	if email != ts.GoogleEmail || ts.Scope(token) != cloudauth.GoogleScope {
		t.Errorf("got %s and a token for %q, want %s and a cloud-platform token", email, ts.Scope(token), ts.GoogleEmail)
	}
	// The token is reused until it expires.
	if _, again, err := src.Google(context.Background(), ts.GoogleKey); err != nil || again != token || ts.Requests("google") != 1 {
		t.Errorf("second call: %v, same token %v, %d requests; want the cached token and 1 request", err, again == token, ts.Requests("google"))
	}
}

func TestGoogleRefusesOtherKeys(t *testing.T) {
	ts := tokenserver.New(t)
	src := cloudauth.New(cloudauth.Options{HTTPClient: ts.Client()})
	var key map[string]string
	if err := json.Unmarshal([]byte(ts.GoogleKey), &key); err != nil {
		t.Fatal(err)
	}
	with := func(field, value string) string {
		changed := map[string]string{}
		for k, v := range key {
			changed[k] = v
		}
		changed[field] = value
		out, _ := json.Marshal(changed)
		return string(out)
	}
	for _, tc := range []struct{ name, key, want string }{
		{"an external account, which reads files", with("type", "external_account"), "service_account"},
		{"a plain-HTTP token endpoint", with("token_uri", strings.Replace(ts.URL, "https", "http", 1)+"/google/token"), "not an https URL"},
		{"another account's key", with("client_email", "intruder@example.iam.gserviceaccount.com"), "400 Bad Request"},
		{"not JSON", "{", "reading the Google service account key"},
		{"too large", strings.Repeat(" ", 70<<10), "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := src.Google(context.Background(), tc.key)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "refused by the test token service") {
				t.Errorf("the endpoint's answer is shown: %v", err)
			}
		})
	}
}

func TestAzureServicePrincipal(t *testing.T) {
	ts := tokenserver.New(t)
	src := cloudauth.New(cloudauth.Options{HTTPClient: ts.Client()})
	sp := cloudauth.ServicePrincipal{TenantID: ts.Tenant, ClientID: ts.ClientID, ClientSecret: ts.ClientSecret, Endpoint: ts.URL}
	token, err := src.AzureServicePrincipal(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	if got := ts.Scope(token); got != cloudauth.AzureDevOpsScope {
		t.Errorf("token for %q, want %q", got, cloudauth.AzureDevOpsScope)
	}
	if again, err := src.AzureServicePrincipal(context.Background(), sp); err != nil || again != token || ts.Requests("entra") != 1 {
		t.Errorf("second call: %v, same token %v, %d requests; want the cached token and 1 request", err, again == token, ts.Requests("entra"))
	}
	sp.ClientSecret = "wrong"
	if _, err := src.AzureServicePrincipal(context.Background(), sp); err == nil || !strings.Contains(err.Error(), "400") ||
		strings.Contains(err.Error(), "refused by the test token service") {
		t.Errorf("a wrong secret: %v, want the endpoint's status only", err)
	}
	if _, err := src.AzureServicePrincipal(context.Background(), cloudauth.ServicePrincipal{ClientID: "x"}); err == nil {
		t.Error("an incomplete service principal was taken")
	}
}

func TestAzureWorkloadIdentity(t *testing.T) {
	ts := tokenserver.New(t)
	ts.UseWorkloadIdentity(t)
	src := cloudauth.New(cloudauth.Options{HTTPClient: ts.Client()})
	token, err := src.AzureWorkloadIdentity(context.Background(), cloudauth.AzureDevOpsScope)
	if err != nil {
		t.Fatal(err)
	}
	if got := ts.Scope(token); got != cloudauth.AzureDevOpsScope {
		t.Errorf("token for %q, want %q", got, cloudauth.AzureDevOpsScope)
	}
}

// TestWorkloadIdentityOnlyForAzureHosts is finding N8 of the second
// tenant review: a repository Secret asking for the workload identity
// buys the process's Azure DevOps token only for an Azure DevOps host (a
// Helm repository: only for an Azure Container Registry) or a host the
// options list; elsewhere nothing is bought, so nothing can be sent.
func TestWorkloadIdentityOnlyForAzureHosts(t *testing.T) {
	ts := tokenserver.New(t)
	ts.UseWorkloadIdentity(t)
	src := cloudauth.New(cloudauth.Options{HTTPClient: ts.Client(), AzureIdentityHosts: []string{"devops.corp.example"}})
	identity := cloudauth.Credentials{AzureWorkloadIdentity: true}
	ctx := context.Background()
	for _, c := range []struct {
		url  string
		helm bool
	}{
		{"https://collector.example/org/_git/repo", false},
		{"https://dev.azure.com.collector.example/org/_git/repo", false},
		{"git@collector.example:v3/org/p/r", false},
		{"https://dev.azure.com/org/p/_git/r", true}, // a Helm repository must be a registry
		{"oci://collector.example/charts", true},
		{"registry.azurecr.io.collector.example/charts", true},
	} {
		if _, err := src.Buy(ctx, identity, c.url, c.helm); !errors.Is(err, cloudauth.ErrIdentityHost) {
			t.Errorf("%s (helm %v): %v, want %v", c.url, c.helm, err, cloudauth.ErrIdentityHost)
		}
	}
	if n := ts.Requests("entra"); n != 0 {
		t.Fatalf("%d token requests for hosts that are not Azure's", n)
	}
	for _, url := range []string{"https://dev.azure.com/org/p/_git/r", "https://org.visualstudio.com/p/_git/r", "https://devops.corp.example/org/r"} {
		b, err := src.Buy(ctx, identity, url, false)
		if err != nil || ts.Scope(b.BearerToken) != cloudauth.AzureDevOpsScope {
			t.Errorf("%s: %+v %v, want an Azure DevOps token", url, b, err)
		}
	}
}

func TestAzureContainerRegistry(t *testing.T) {
	ts := tokenserver.New(t)
	ts.UseWorkloadIdentity(t)
	src := cloudauth.New(cloudauth.Options{HTTPClient: ts.Client()})
	token, err := src.AzureContainerRegistry(context.Background(), ts.Host)
	if err != nil {
		t.Fatal(err)
	}
	if got := ts.Scope(token); got != "registry:"+ts.Host {
		t.Errorf("refresh token for %q, want the registry's", got)
	}
	if again, err := src.AzureContainerRegistry(context.Background(), ts.Host); err != nil || again != token || ts.Requests("exchange") != 1 {
		t.Errorf("second call: %v, same token %v, %d exchanges; want the cached token and 1 exchange", err, again == token, ts.Requests("exchange"))
	}
}

func ExampleSource_Google() {
	// A repository Secret's gcpServiceAccountKey buys Git's credentials:
	// the account's e-mail as the user, the access token as the password.
	key, _ := os.ReadFile("service-account-key.json")
	email, token, err := cloudauth.Default.Google(context.Background(), string(key))
	_, _, _ = email, token, err
}

func TestEKS(t *testing.T) {
	sts := stsserver.New(t)
	sts.UseFromEnvironment(t)
	for _, tc := range []struct {
		name    string
		cluster cloudauth.AWSCluster
		want    string
	}{
		{"as the profile's user", cloudauth.AWSCluster{ClusterName: sts.ClusterName, Profile: "eks"}, ":user/deployer"},
		{"as an assumed role", cloudauth.AWSCluster{ClusterName: sts.ClusterName, Profile: "eks", RoleARN: sts.RoleARN}, ":assumed-role/capstan-deployer/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token, err := cloudauth.Default.EKS(context.Background(), tc.cluster)
			if err != nil {
				t.Fatal(err)
			}
			arn, err := sts.Authenticate(token.Token)
			if err != nil || !strings.Contains(arn, tc.want) {
				t.Errorf("STS says the token is %q (%v), want %q", arn, err, tc.want)
			}
			if time.Until(token.Expires) < 13*time.Minute {
				t.Errorf("the token expires at %s, want in 14 minutes", token.Expires)
			}
		})
	}
	// A token signed for another cluster's name is refused.
	other, err := cloudauth.Default.EKS(context.Background(), cloudauth.AWSCluster{ClusterName: "staging", Profile: "eks"})
	if err != nil {
		t.Fatal(err)
	}
	if arn, err := sts.Authenticate(other.Token); err == nil {
		t.Errorf("a token for another cluster is taken as %s", arn)
	}
}

func TestAKS(t *testing.T) {
	ts := tokenserver.New(t)
	ts.UseWorkloadIdentity(t)
	token, err := cloudauth.New(cloudauth.Options{HTTPClient: ts.Client()}).AKS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := ts.Scope(token.Token); got != cloudauth.AKSServerID+"/.default" || token.Expires.Before(time.Now()) {
		t.Errorf("a token for %q expiring %s, want AKS's server app", got, token.Expires)
	}
}

func TestGKE(t *testing.T) {
	ts := tokenserver.New(t)
	key := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(key, []byte(ts.GoogleKey), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", key)
	token, err := cloudauth.New(cloudauth.Options{HTTPClient: ts.Client()}).GKE(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ts.Scope(token.Token), cloudauth.GoogleScope) || token.Expires.Before(time.Now()) {
		t.Errorf("a token the service did not issue, or expired: %+v", token)
	}
}
