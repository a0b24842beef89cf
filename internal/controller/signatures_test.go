package controller

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/gpgkey"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestSignatureKeys: in a project with signatureKeys, an unsigned commit
// is refused (ComparisonError, nothing synced), a commit signed with a
// key argocd-gpg-keys-cm does not hold too, one signed with a key held
// but not in the project's list too, and a commit signed with an allowed
// key syncs.
func TestSignatureKeys(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	allowed, held, stranger := gpgkey.New(t, "allowed"), gpgkey.New(t, "held"), gpgkey.New(t, "stranger")
	e.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.GPGKeysConfigMap, Namespace: e.ns},
		Data: map[string]string{allowed.ID(): allowed.Armored(), held.ID(): held.Armored()}})
	e.create(&v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "signed", Namespace: e.ns}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos:   []string{"*"},
		Destinations:  []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		SignatureKeys: []v1alpha1.SignatureKey{{KeyID: allowed.ID()}},
	}})
	remote := gitserver.NewLocalRepo(t)
	cm := func(v string) map[string]string {
		return map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: " + v + "}\n"}
	}
	unsigned := remote.Commit(t, "unsigned", cm("unsigned"))
	dest := testCluster.NewNamespace(t)
	e.create(newApp(e, "guarded", "signed", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}))
	e.waitCondition("guarded", v1alpha1.ApplicationConditionComparisonError, "Target revision "+unsigned+" in Git is not signed, but a signature is required")
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(t.Context(), "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("an unsigned commit was synced: %v", err)
	}

	byStranger := remote.CommitSigned(t, "by a stranger", cm("stranger"), stranger.Sign)
	e.waitCondition("guarded", v1alpha1.ApplicationConditionComparisonError, "Failed verifying revision "+byStranger+": signed with key not in keyring (key_id="+stranger.ID()+")")
	byHeld := remote.CommitSigned(t, "by a key held, not allowed", cm("held"), held.Sign)
	e.waitCondition("guarded", v1alpha1.ApplicationConditionComparisonError, "Revision "+byHeld+" is signed with key "+held.ID()+", which AppProject signed does not allow")

	remote.CommitSigned(t, "by the allowed key", cm("allowed"), allowed.Sign)
	e.waitSyncedHealthy("guarded")
	got, err := e.kube.CoreV1().ConfigMaps(dest).Get(t.Context(), "cm", metav1.GetOptions{})
	if err != nil || got.Data["v"] != "allowed" {
		t.Fatalf("the signed commit's ConfigMap: %v %v", err, got.Data)
	}
	for _, c := range e.app("guarded").Status.Conditions {
		if c.Type == v1alpha1.ApplicationConditionComparisonError {
			t.Errorf("a ComparisonError is left: %s", c.Message)
		}
	}
}

// TestSourceIntegrity: a project's sourceIntegrity (Argo CD's newer form
// of signatureKeys) with a head GPG policy for the repository syncs only
// commits signed with one of the policy's keys, with Argo CD's GIT/GPG
// messages.
func TestSourceIntegrity(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	allowed, held := gpgkey.New(t, "allowed"), gpgkey.New(t, "held")
	e.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.GPGKeysConfigMap, Namespace: e.ns},
		Data: map[string]string{allowed.ID(): allowed.Armored(), held.ID(): held.Armored()}})
	e.create(&v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "integrity", Namespace: e.ns}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		SourceIntegrity: &v1alpha1.SourceIntegrity{Git: &v1alpha1.SourceIntegrityGit{Policies: []v1alpha1.SourceIntegrityGitPolicy{{
			Repos: []v1alpha1.SourceIntegrityGitPolicyRepo{{URL: "*"}, {URL: "!https://example.com/exempt/*"}},
			GPG:   &v1alpha1.SourceIntegrityGitPolicyGPG{Mode: gpgModeHead, Keys: []string{allowed.ID()}},
		}}}},
	}})
	remote := gitserver.NewLocalRepo(t)
	cm := func(v string) map[string]string {
		return map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: " + v + "}\n"}
	}
	unsigned := remote.Commit(t, "unsigned", cm("unsigned"))
	dest := testCluster.NewNamespace(t)
	e.create(newApp(e, "checked", "integrity", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}))
	c := e.waitCondition("checked", v1alpha1.ApplicationConditionComparisonError, "GIT/GPG: Failed verifying revision "+unsigned+" by '")
	if !strings.HasSuffix(c.Message, "': unsigned (key_id=)") || !strings.Contains(c.Message, "<") {
		t.Errorf("unsigned: %s", c.Message)
	}
	byHeld := remote.CommitSigned(t, "by a key held, not allowed", cm("held"), held.Sign)
	e.waitCondition("checked", v1alpha1.ApplicationConditionComparisonError, "GIT/GPG: Failed verifying revision "+byHeld)
	e.waitCondition("checked", v1alpha1.ApplicationConditionComparisonError, "signed with unallowed key (key_id="+held.ID()+")")
	remote.CommitSigned(t, "by the allowed key", cm("allowed"), allowed.Sign)
	e.waitSyncedHealthy("checked")
	if got, err := e.kube.CoreV1().ConfigMaps(dest).Get(t.Context(), "cm", metav1.GetOptions{}); err != nil || got.Data["v"] != "allowed" {
		t.Fatalf("the signed commit's ConfigMap: %v", err)
	}
}

func TestIntegrityPolicy(t *testing.T) {
	policy := func(mode string, urls ...string) v1alpha1.SourceIntegrityGitPolicy {
		p := v1alpha1.SourceIntegrityGitPolicy{GPG: &v1alpha1.SourceIntegrityGitPolicyGPG{Mode: mode}}
		for _, u := range urls {
			p.Repos = append(p.Repos, v1alpha1.SourceIntegrityGitPolicyRepo{URL: u})
		}
		return p
	}
	proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SourceIntegrity: &v1alpha1.SourceIntegrity{Git: &v1alpha1.SourceIntegrityGit{
		Policies: []v1alpha1.SourceIntegrityGitPolicy{
			policy(gpgModeHead, "https://git.example.com/*", "!https://git.example.com/sandbox/*"),
			policy(gpgModeNone, "https://git.example.com/sandbox/*"),
			policy(gpgModeStrict, "https://other.example.com/*"),
			policy(gpgModeHead, "https://other.example.com/team/*"),
		}}}}}
	for url, want := range map[string]string{
		"https://git.example.com/app":        gpgModeHead,
		"https://git.example.com/sandbox/x":  gpgModeNone,
		"https://unrelated.example.com/repo": "",
		"https://other.example.com/team/app": gpgModeStrict, // the first policy that matches
	} {
		got := ""
		if p := integrityPolicy(proj, url); p != nil {
			got = p.GPG.Mode
		}
		if got != want {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
	}
	srcs := func(url string) []v1alpha1.ApplicationSource { return []v1alpha1.ApplicationSource{{RepoURL: url}} }
	if requiresSignatures(proj, srcs("https://git.example.com/sandbox/x")) || !requiresSignatures(proj, srcs("https://git.example.com/app")) {
		t.Error("requiresSignatures does not follow the policies' modes")
	}
}

// TestSourceIntegrityStrict: a strict policy checks the whole history: an
// unsigned commit behind a signed head is refused until a seal commit
// (signed by an allowed key, with the Argocd-gpg-seal trailer) vouches
// for it; a later commit by a key the policy does not allow is refused.
func TestSourceIntegrityStrict(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	allowed, held := gpgkey.New(t, "allowed"), gpgkey.New(t, "held")
	e.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.GPGKeysConfigMap, Namespace: e.ns},
		Data: map[string]string{allowed.ID(): allowed.Armored(), held.ID(): held.Armored()}})
	e.create(&v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "strict", Namespace: e.ns}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		SourceIntegrity: &v1alpha1.SourceIntegrity{Git: &v1alpha1.SourceIntegrityGit{Policies: []v1alpha1.SourceIntegrityGitPolicy{{
			Repos: []v1alpha1.SourceIntegrityGitPolicyRepo{{URL: "*"}},
			GPG:   &v1alpha1.SourceIntegrityGitPolicyGPG{Mode: gpgModeStrict, Keys: []string{allowed.ID()}},
		}}}},
	}})
	remote := gitserver.NewLocalRepo(t)
	cm := func(v string) map[string]string {
		return map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: " + v + "}\n"}
	}
	old := remote.Commit(t, "from before signing", cm("old"))
	remote.CommitSigned(t, "signed", cm("signed"), allowed.Sign)
	dest := testCluster.NewNamespace(t)
	e.create(newApp(e, "strict", "strict", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}))
	e.waitCondition("strict", v1alpha1.ApplicationConditionComparisonError, "GIT/GPG: Failed verifying revision "+old+" by 'test <test@example.com>': unsigned (key_id=)")

	remote.CommitSigned(t, "seal\n\nArgocd-gpg-seal: the history before signing was reviewed", cm("sealed"), allowed.Sign)
	e.waitSyncedHealthy("strict")
	if got, err := e.kube.CoreV1().ConfigMaps(dest).Get(t.Context(), "cm", metav1.GetOptions{}); err != nil || got.Data["v"] != "sealed" {
		t.Fatalf("the sealed commit's ConfigMap: %v, %v", got, err)
	}

	byHeld := remote.CommitSigned(t, "by a key held, not allowed", cm("held"), held.Sign)
	e.waitCondition("strict", v1alpha1.ApplicationConditionComparisonError, "GIT/GPG: Failed verifying revision "+byHeld+" by 'test <test@example.com>': signed with unallowed key (key_id="+held.ID()+")")
}
