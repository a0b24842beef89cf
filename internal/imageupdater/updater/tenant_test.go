package updater

import (
	"cmp"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	iuv1 "github.com/capstan-cd/capstan/api/imageupdater/v1alpha1"
	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/trap"
)

// tenantField is one value an Application's author writes into a field
// that names a Secret, a URL or a program, and the refusal it must get.
type tenantField struct {
	name string
	// annotations (annotation mode) or ref (ImageUpdater mode) set the field.
	annotations map[string]string
	ref         iuv1.ApplicationRef
	project     string
	// reason and says are the Event's reason and a part of its message.
	reason, says string
}

// tenantRig is a rig whose namespace also holds what a tenant must never
// reach: another namespace's Secret, argocd-secret, a cluster Secret, a
// repository Secret and a write credential for another repository; and a
// trap standing for the address the tenant chose (a registry and a Git
// server).
type tenantRig struct {
	*rig
	other string
	trap  *trap.Server
}

func newTenantRig(t *testing.T) *tenantRig {
	r := &tenantRig{rig: newBareRig(t, "pullsecret:$NS/pull", "", nil), other: cluster.NewNamespace(t), trap: trap.Start(t)}
	r.dockerConfigSecret("pull", r.reg.Password) // the administrator's, in registries.conf
	loot := map[string]string{"token": "u:p", "username": "u", "password": "p", "config": `{"bearerToken":"cluster-token"}`, "server.secretkey": "k:k"}
	r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "loot", Namespace: r.other}, StringData: loot})
	r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: r.ns}, StringData: loot})
	for name, kind := range map[string]string{"cluster-prod": v1alpha1.SecretTypeCluster, "org-repo": v1alpha1.SecretTypeRepository} {
		r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns, Labels: map[string]string{v1alpha1.LabelSecretType: kind}},
			StringData: map[string]string{"url": r.repo.URL, "username": "u", "password": "p", "config": "{}"}})
	}
	r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "deploy-creds", Namespace: r.ns},
		StringData: map[string]string{"url": r.repo.URL, "username": "u", "password": "p"}})
	r.create(&v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: r.ns}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos:  []string{r.repo.URL},
		Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}}})
	// The trap is a registry too, reached over plain HTTP as the tenant's
	// registry would be.
	r.configure(func(data map[string]string) {
		data["registries.conf"] += fmt.Sprintf("- name: chosen\n  api_url: http://%s\n  prefix: %s\n  insecure: yes\n", r.trap.Host, r.trap.Host)
	})
	r.reg.PushImage(t, "team/app", t0, "1.0.0")
	r.reg.PushImage(t, "team/app", t0.Add(1), "1.1.0")
	r.repo.Commit(t, "app", map[string]string{"x/kustomization.yaml": "resources: []\n"})
	return r
}

// check creates an Application per field (its settings from annotations
// or from ref), runs a cycle, and expects each refused with its reason,
// nothing written and the trap to have heard nothing.
func (r *tenantRig) check(t *testing.T, fields []tenantField, viaImageUpdater bool) {
	var refs []iuv1.ApplicationRef
	apps := map[string]*v1alpha1.Application{}
	for _, f := range fields {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: r.ns, Annotations: f.annotations},
			Spec: v1alpha1.ApplicationSpec{Project: cmp.Or(f.project, "default"),
				Source:      &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: "x", TargetRevision: "main", Kustomize: &v1alpha1.ApplicationSourceKustomize{}},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: f.name}}}
		r.create(app)
		apps[f.name] = app
		if viaImageUpdater {
			ref := f.ref
			ref.NamePattern = f.name
			refs = append(refs, ref)
		}
	}
	if viaImageUpdater {
		r.imageUpdater("tenant", iuv1.ImageUpdaterSpec{ApplicationRefs: refs})
	}
	before := r.repo.Head(t, "main")
	res := r.runOnce()
	if res.Updated != 0 {
		t.Errorf("cycle %+v: a tenant's field was acted on", res)
	}
	for _, f := range fields {
		r.event(apps[f.name], f.reason, f.says)
		if got := r.spec(f.name); got.Source.Kustomize != nil && len(got.Source.Kustomize.Images) > 0 {
			t.Errorf("%s: the Application was written: %v", f.name, got.Source.Kustomize.Images)
		}
	}
	if heard := r.trap.Heard(); len(heard) > 0 {
		t.Errorf("the address a tenant chose heard %d requests: %+v", len(heard), heard)
	}
	if after := r.repo.Head(t, "main"); after != before {
		t.Errorf("the repository was written: %s → %s", before, after)
	}
}

// TestTenantAnnotationsRefused walks every image updater annotation that
// names a Secret, a URL or a program with a tenant's hostile value: each
// Application is refused with an Event saying why, and neither the
// registry nor the Git server the tenant chose hears a request.
func TestTenantAnnotationsRefused(t *testing.T) {
	localcluster.Need(t)
	r := newTenantRig(t)
	chosen := r.trap.Host + "/team/app"
	pull := func(source string) map[string]string {
		return map[string]string{p + "image-list": "app=" + chosen, p + "force-update": "true", p + "pull-secret": source}
	}
	push := func(method, repository string) map[string]string {
		a := map[string]string{p + "image-list": "app=" + r.image("team/app"), p + "force-update": "true", p + "write-back-method": method}
		if repository != "" {
			a[p+"git-repository"] = repository
		}
		return a
	}
	loot := r.trap.URL + "/loot.git"
	r.check(t, []tenantField{
		{name: "pull-other-namespace", annotations: pull("secret:" + r.other + "/loot#token"), reason: "ImageCheckFailed", says: "may not be named from namespace " + r.ns},
		{name: "pull-other-dockercfg", annotations: pull("pullsecret:" + r.other + "/loot"), reason: "ImageCheckFailed", says: "may not be named from namespace " + r.ns},
		{name: "pull-cluster-secret", annotations: pull("secret:" + r.ns + "/cluster-prod#config"), reason: "ImageCheckFailed", says: "is a cluster Secret"},
		{name: "pull-repo-secret", annotations: pull("secret:" + r.ns + "/org-repo#password"), reason: "ImageCheckFailed", says: "is a repository Secret"},
		{name: "pull-argocd-secret", annotations: pull("secret:" + r.ns + "/argocd-secret#server.secretkey"), reason: "ImageCheckFailed", says: "holds the install's own keys"},
		{name: "pull-env", annotations: pull("env:HOME"), reason: "ImageCheckFailed", says: "only be set in registries.conf"},
		{name: "pull-ext", annotations: pull("ext:/bin/true"), reason: "ImageCheckFailed", says: "only be set in registries.conf"},
		{name: "push-other-namespace", annotations: push("git:secret:"+r.other+"/loot", loot), reason: "ImageUpdateFailed", says: "may not be named from namespace " + r.ns},
		{name: "push-repo-secret", annotations: push("git:secret:"+r.ns+"/org-repo", loot), reason: "ImageUpdateFailed", says: "is a repository Secret"},
		{name: "push-credential-elsewhere", annotations: push("git:secret:"+r.ns+"/deploy-creds", loot), reason: "ImageUpdateFailed", says: "is for " + r.repo.URL},
		{name: "push-outside-project", project: "team", annotations: push("git:repocreds", loot), reason: "ImageUpdateFailed", says: "not in the sourceRepos of project team"},
	}, false)
}

// TestTenantImageUpdaterFieldsRefused does the same for the fields of an
// ImageUpdater: pull secrets, a pull request API on another port than the
// repository's, and a cosign key in argocd-secret.
func TestTenantImageUpdaterFieldsRefused(t *testing.T) {
	localcluster.Need(t)
	r := newTenantRig(t)
	chosen := iuv1.ImageConfig{Alias: "app", ImageName: r.trap.Host + "/team/app"}
	own := iuv1.ImageConfig{Alias: "app", ImageName: r.image("team/app")}
	pull := func(source string) iuv1.ApplicationRef {
		return iuv1.ApplicationRef{Images: []iuv1.ImageConfig{chosen},
			CommonUpdateSettings: &iuv1.CommonUpdateSettings{PullSecret: &source, ForceUpdate: new(true)}}
	}
	r.check(t, []tenantField{
		{name: "iu-pull-other-namespace", ref: pull("pullsecret:" + r.other + "/loot"), reason: "ImageCheckFailed", says: "may not be named from namespace " + r.ns},
		{name: "iu-pull-cluster-secret", ref: pull("secret:" + r.ns + "/cluster-prod#config"), reason: "ImageCheckFailed", says: "is a cluster Secret"},
		{name: "iu-pull-env", ref: pull("env:HOME"), reason: "ImageCheckFailed", says: "only be set in registries.conf"},
		{name: "iu-pull-request-elsewhere", ref: iuv1.ApplicationRef{Images: []iuv1.ImageConfig{own},
			CommonUpdateSettings: &iuv1.CommonUpdateSettings{ForceUpdate: new(true)},
			WriteBackConfig: &iuv1.WriteBackConfig{Method: new("git"), GitConfig: &iuv1.GitConfig{
				PullRequest: &iuv1.PullRequest{GitHub: &iuv1.PullRequestGitHub{API: r.trap.URL}}}}},
			reason: "ImageUpdateFailed", says: "not on the repository's port"},
		{name: "iu-cosign-argocd-secret", ref: iuv1.ApplicationRef{Images: []iuv1.ImageConfig{own},
			CommonUpdateSettings: &iuv1.CommonUpdateSettings{ForceUpdate: new(true)},
			ImagesVerification:   &iuv1.ImagesVerification{Enabled: new(true), CosignKey: &iuv1.SecretRef{SecretName: "argocd-secret", Key: "server.secretkey"}}},
			reason: "ImageVerificationFailed", says: "holds the install's own keys"},
	}, true)
}
