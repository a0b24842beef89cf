package applicationset_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
	"github.com/capstan-cd/capstan/internal/testing/trap"
)

// scmAppSet is an ApplicationSet of one SCM provider generator making
// one Application per repository branch.
func scmAppSet(ns, name string, gen v1alpha1.SCMProviderGenerator) *v1alpha1.ApplicationSet {
	gen.CloneProtocol, gen.RequeueAfterSeconds = "https", ptr.To[int64](1)
	return &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{SCMProvider: &gen}}},
		Template: v1alpha1.ApplicationSetTemplate{ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: name + "-{{repository}}"},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "{{url}}", Path: "deploy"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "{{repository}}"}}},
	}}
}

// errorOf waits for the ApplicationSet's ErrorOccurred condition to hold
// want.
func (e *env) errorOf(name, want string) {
	e.t.Helper()
	e.eventually("ErrorOccurred of "+name, func() string {
		c := e.condition(name, v1alpha1.ApplicationSetConditionErrorOccurred)
		if c.Status != v1alpha1.ApplicationSetConditionStatusTrue || !strings.Contains(c.Message, want) {
			return fmt.Sprintf("%s %q", c.Status, c.Message) // never "" while it does not hold
		}
		return ""
	})
}

// TestSCMPolicy: argocd-cmd-params-cm's SCM keys hold. With SCM providers
// disabled, or an API address outside allowed.scm.providers, the
// generator stops with Argo CD's message; in token reference strict mode
// a tokenRef Secret without the scm-creds label is refused (and its token
// never sent), a labelled one is read.
func TestSCMPolicy(t *testing.T) {
	org := scmserver.GitHubOrg(t, "gh-token", "shop",
		scmserver.Repo{Name: "web", DefaultBranch: "main", Branches: map[string]string{"main": "0123456789ab"}})
	tokenRef := &v1alpha1.SecretRef{SecretName: "gh", Key: "token"}
	gen := v1alpha1.SCMProviderGenerator{Github: &v1alpha1.SCMProviderGeneratorGithub{Organization: "shop", API: org.URL, TokenRef: tokenRef}}
	secret := func(ns string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gh", Namespace: ns, Labels: labels}, StringData: map[string]string{"token": "gh-token"}}
	}
	ctx := context.Background()

	t.Run("disabled", func(t *testing.T) {
		e := start(t, func(o *applicationset.Options) { o.SCM.Disabled = true })
		if err := e.client.Create(ctx, scmAppSet(e.ns, "off", gen)); err != nil {
			t.Fatal(err)
		}
		e.errorOf("off", "scm providers are disabled")
	})
	t.Run("not allowed", func(t *testing.T) {
		e := start(t, func(o *applicationset.Options) { o.SCM.Allowed = []string{"https://github.example"} })
		if err := e.client.Create(ctx, scmAppSet(e.ns, "elsewhere", gen)); err != nil {
			t.Fatal(err)
		}
		e.errorOf("elsewhere", `scm provider "`+org.URL+`" not allowed, must use one of the following: https://github.example`)
	})
	t.Run("strict token references", func(t *testing.T) {
		e := start(t, func(o *applicationset.Options) { o.SCM.TokenRefStrict = true; o.SCM.Allowed = []string{org.URL} })
		if err := e.client.Create(ctx, secret(e.ns, nil)); err != nil {
			t.Fatal(err)
		}
		if err := e.client.Create(ctx, scmAppSet(e.ns, "strict", gen)); err != nil {
			t.Fatal(err)
		}
		e.errorOf("strict", "is not a valid SCM creds secret")
		s := secret(e.ns, map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeSCMCreds})
		if err := e.client.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		e.waitApps("strict-web")
	})
	// Outside strict mode too, a tokenRef is a tenant's field: never
	// argocd-secret nor a repository or cluster Secret of the namespace,
	// and the API it names hears nothing (second tenant review).
	t.Run("never the install's Secrets", func(t *testing.T) {
		chosen := trap.Start(t)
		e := start(t, nil)
		for name, labels := range map[string]map[string]string{
			"argocd-secret": nil, "org-repo": {v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepository},
			"prod-cluster": {v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster},
		} {
			s := secret(e.ns, labels)
			s.Name = name
			if err := e.client.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		for name, says := range map[string]string{"argocd-secret": "holds the install's own keys", "org-repo": "is a repository Secret", "prod-cluster": "is a cluster Secret"} {
			g := v1alpha1.SCMProviderGenerator{Github: &v1alpha1.SCMProviderGeneratorGithub{Organization: "shop", API: chosen.URL,
				TokenRef: &v1alpha1.SecretRef{SecretName: name, Key: "token"}}}
			if err := e.client.Create(ctx, scmAppSet(e.ns, "loot-"+name, g)); err != nil {
				t.Fatal(err)
			}
			e.errorOf("loot-"+name, says)
		}
		if heard := chosen.Heard(); len(heard) > 0 {
			t.Errorf("the API the generator named heard %d requests: %+v", len(heard), heard)
		}
	})
}

// TestProviderCA: a provider behind TLS with a private CA is refused until
// the generator trusts it through caRef (or skips verification with
// insecure).
func TestProviderCA(t *testing.T) {
	e := start(t, nil)
	ctx := context.Background()
	gitlab, caPEM := gitlabBehindTLS(t, e)
	if err := e.client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gl-ca", Namespace: e.ns},
		Data: map[string]string{"ca.crt": string(caPEM)}}); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Create(ctx, scmAppSet(e.ns, "untrusted", v1alpha1.SCMProviderGenerator{Gitlab: gitlab})); err != nil {
		t.Fatal(err)
	}
	e.errorOf("untrusted", "certificate")
	withCA := gitlab.DeepCopy()
	withCA.CARef = &v1alpha1.ConfigMapKeyRef{ConfigMapName: "gl-ca", Key: "ca.crt"}
	insecure := gitlab.DeepCopy()
	insecure.Insecure = true
	for name, g := range map[string]*v1alpha1.SCMProviderGeneratorGitlab{"ca": withCA, "insecure": insecure} {
		if err := e.client.Create(ctx, scmAppSet(e.ns, name, v1alpha1.SCMProviderGenerator{Gitlab: g})); err != nil {
			t.Fatal(err)
		}
	}
	e.waitApps("ca-web", "insecure-web")
}

// TestProviderRootCAPath: the CA file applicationsetcontroller.scm.root.ca.path
// names is trusted by every SCM provider generator, without a caRef.
func TestProviderRootCAPath(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "roots.pem")
	e := start(t, func(o *applicationset.Options) { o.SCM.RootCAPath = caFile })
	gitlab, caPEM := gitlabBehindTLS(t, e)
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Create(context.Background(), scmAppSet(e.ns, "rooted", v1alpha1.SCMProviderGenerator{Gitlab: gitlab})); err != nil {
		t.Fatal(err)
	}
	e.waitApps("rooted-web")
}

// gitlabBehindTLS serves a GitLab group with one repository over TLS, with
// its token in a Secret of e's namespace, and returns the generator that
// reads it and the PEM of the server's certificate.
func gitlabBehindTLS(t *testing.T, e *env) (*v1alpha1.SCMProviderGeneratorGitlab, []byte) {
	group := scmserver.GitLabGroup(t, "gl-token", "shop",
		scmserver.Repo{Name: "web", DefaultBranch: "main", Branches: map[string]string{"main": "0123456789ab"}})
	target, err := url.Parse(group.URL)
	if err != nil {
		t.Fatal(err)
	}
	tlsSrv := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(tlsSrv.Close)
	if err := e.client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gl", Namespace: e.ns},
		StringData: map[string]string{"token": "gl-token"}}); err != nil {
		t.Fatal(err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw})
	return &v1alpha1.SCMProviderGeneratorGitlab{Group: "shop", API: tlsSrv.URL, TokenRef: &v1alpha1.SecretRef{SecretName: "gl", Key: "token"}}, caPEM
}
