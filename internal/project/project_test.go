package project

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func team() *v1alpha1.AppProject {
	return &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team"}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos:      []string{"https://github.com/org/*"},
		SourceNamespaces: []string{"team-*"},
		Destinations: []v1alpha1.ApplicationDestination{
			{Server: "https://kubernetes.default.svc", Namespace: "team-*"},
			{Name: "prod", Namespace: "shop"},
		},
		ClusterResourceWhitelist:   []v1alpha1.ClusterResourceRestrictionItem{{Group: "", Kind: "Namespace"}},
		NamespaceResourceBlacklist: []metav1.GroupKind{{Group: "", Kind: "ResourceQuota"}},
	}}
}

func TestCheckApplication(t *testing.T) {
	app := func(ns, repo string) *v1alpha1.Application {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: repo}}}
	}
	for _, tc := range []struct {
		app  *v1alpha1.Application
		dest Destination
		want string
	}{
		{app("argocd", "https://github.com/org/web.git"), Destination{Server: "https://kubernetes.default.svc", Namespace: "team-a"}, ""},
		{app("argocd", "https://GitHub.com/org/web"), Destination{Server: "https://prod:6443", Name: "prod", Namespace: "shop"}, ""},
		{app("team-b", "https://github.com/org/web.git"), Destination{Server: "https://kubernetes.default.svc", Namespace: "team-b"}, ""},
		{app("other", "https://github.com/org/web.git"), Destination{Server: "https://kubernetes.default.svc", Namespace: "team-a"},
			"application 'web' in namespace 'other' is not permitted to use project 'team'"},
		{app("argocd", "https://gitlab.com/org/web.git"), Destination{Server: "https://kubernetes.default.svc", Namespace: "team-a"},
			"application repo https://gitlab.com/org/web.git is not permitted in project 'team'"},
		{app("argocd", "https://github.com/org/web.git"), Destination{Server: "https://kubernetes.default.svc", Namespace: "kube-system"},
			"application destination server 'https://kubernetes.default.svc' and namespace 'kube-system' do not match any of the allowed destinations in project 'team'"},
	} {
		err := CheckApplication(team(), tc.app, "argocd", tc.dest)
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("%s %s → %+v: got %v, want %q", tc.app.Namespace, tc.app.Spec.Source.RepoURL, tc.dest, err, tc.want)
		}
	}
}

// TestCheckApplicationHydrator: a source hydrator's dry source must be
// permitted as well as the branch it syncs.
func TestCheckApplicationHydrator(t *testing.T) {
	hydrated := func(dry, sync string) *v1alpha1.Application {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd"}, Spec: v1alpha1.ApplicationSpec{
			SourceHydrator: &v1alpha1.SourceHydrator{DrySource: v1alpha1.DrySource{RepoURL: dry}, SyncSource: v1alpha1.SyncSource{RepoURL: sync, TargetBranch: "env", Path: "p"}}}}
	}
	dest := Destination{Server: "https://kubernetes.default.svc", Namespace: "team-a"}
	if err := CheckApplication(team(), hydrated("https://github.com/org/web.git", ""), "argocd", dest); err != nil {
		t.Errorf("a permitted hydrator: %v", err)
	}
	if err := CheckApplication(team(), hydrated("https://gitlab.com/org/dry.git", "https://github.com/org/web.git"), "argocd", dest); err == nil {
		t.Error("a dry source the project does not permit was accepted")
	}
	if err := CheckApplication(team(), hydrated("https://github.com/org/web.git", "https://gitlab.com/org/hydrated.git"), "argocd", dest); err == nil {
		t.Error("a sync source the project does not permit was accepted")
	}
}

func TestPermits(t *testing.T) {
	obj := func(kind, namespace string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind(kind)
		u.SetName("x")
		u.SetNamespace(namespace)
		return u
	}
	inCluster := Destination{Server: "https://kubernetes.default.svc", Name: "in-cluster"}
	prod := Destination{Server: "https://prod.example.com", Name: "prod"}
	for _, tc := range []struct {
		kind, namespace string
		namespaced      bool
		cluster         Destination
		ok              bool
	}{
		{"Namespace", "", false, inCluster, true},
		{"PersistentVolume", "", false, inCluster, false}, // not in the cluster whitelist
		{"ConfigMap", "team-a", true, inCluster, true},
		{"ResourceQuota", "team-a", true, inCluster, false}, // blacklisted
		// A namespace outside the project's destinations, though the
		// manifest names it explicitly: a finding of the tenant review.
		{"ConfigMap", "kube-system", true, inCluster, false},
		{"ConfigMap", "shop", true, inCluster, false},
		{"ConfigMap", "shop", true, prod, true},
	} {
		if err := Permits(team(), obj(tc.kind, tc.namespace), tc.namespaced, tc.cluster); (err == nil) != tc.ok {
			t.Errorf("%s in %s of %s: %v, want ok=%v", tc.kind, tc.namespace, tc.cluster.Name, err, tc.ok)
		}
	}
}

func ExampleCheckApplication() {
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "apps-*"}},
	}}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: "argocd"},
		Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "https://github.com/argoproj/argocd-example-apps"}}}
	fmt.Println(CheckApplication(proj, app, "argocd", Destination{Server: "https://kubernetes.default.svc", Namespace: "apps-guestbook"}))
	fmt.Println(CheckApplication(proj, app, "argocd", Destination{Server: "https://kubernetes.default.svc", Namespace: "kube-system"}))
	// Output:
	// <nil>
	// application destination server 'https://kubernetes.default.svc' and namespace 'kube-system' do not match any of the allowed destinations in project 'default'
}
