package updater

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iuv1 "github.com/capstan-cd/capstan/api/imageupdater/v1alpha1"
	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

// label sets labels on an Application.
func (r *rig) label(app *v1alpha1.Application, kv ...string) {
	r.t.Helper()
	before := app.DeepCopy()
	if app.Labels == nil {
		app.Labels = map[string]string{}
	}
	for i := 0; i < len(kv); i += 2 {
		app.Labels[kv[i]] = kv[i+1]
	}
	if err := r.c.Patch(r.ctx, app, client.MergeFrom(before)); err != nil {
		r.t.Fatal(err)
	}
}

// imageUpdater creates an ImageUpdater in the rig's namespace.
func (r *rig) imageUpdater(name string, spec iuv1.ImageUpdaterSpec) *iuv1.ImageUpdater {
	r.t.Helper()
	iu := &iuv1.ImageUpdater{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns}, Spec: spec}
	r.create(iu)
	return iu
}

// status reads an ImageUpdater's status.
func (r *rig) status(name string) iuv1.ImageUpdaterStatus {
	r.t.Helper()
	var iu iuv1.ImageUpdater
	if err := r.c.Get(r.ctx, client.ObjectKey{Namespace: r.ns, Name: name}, &iu); err != nil {
		r.t.Fatal(err)
	}
	return iu.Status
}

// condition is an ImageUpdater condition as "Status Reason: message".
func condition(s iuv1.ImageUpdaterStatus, typ string) string {
	c := apimeta.FindStatusCondition(s.Conditions, typ)
	if c == nil {
		return "none"
	}
	return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
}

func str(s string) *string { return &s }

// An ImageUpdater selecting two Applications by label writes one new tag
// to both, leaves a third Application whose name matches but labels do
// not alone, and records what it did in its status.
func TestImageUpdaterSelectsApplicationsByLabel(t *testing.T) {
	localcluster.Need(t)
	r := newRig(t, "pullsecret:$NS/pull", "", nil)
	r.dockerConfigSecret("pull", r.reg.Password)
	image := r.image("shop/web")
	r.reg.PushImage(t, "shop/web", t0, "1.0.0")
	r.reg.PushImage(t, "shop/web", t0.Add(time.Hour), "1.1.0")
	r.reg.PushImage(t, "shop/web", t0.Add(2*time.Hour), "2.0.0")
	r.repo.Commit(t, "web", map[string]string{
		"web/kustomization.yaml": "resources:\n- deployment.yaml\n",
		"web/deployment.yaml":    deploymentYAML("web", image+":1.0.0"),
	})
	kustomize := func(src *v1alpha1.ApplicationSource) { src.Kustomize = &v1alpha1.ApplicationSourceKustomize{} }
	eu, us, other := r.app("shop-eu", "web", nil, kustomize), r.app("shop-us", "web", nil, kustomize), r.app("shop-lab", "web", nil, kustomize)
	r.label(eu, "team", "shop")
	r.label(us, "team", "shop")
	r.label(other, "team", "lab")
	r.imageUpdater("shop", iuv1.ImageUpdaterSpec{
		CommonUpdateSettings: &iuv1.CommonUpdateSettings{UpdateStrategy: str("semver")},
		ApplicationRefs: []iuv1.ApplicationRef{{
			NamePattern:    "shop-*",
			LabelSelectors: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "shop"}},
			Images:         []iuv1.ImageConfig{{Alias: "web", ImageName: image + ":1.x"}},
		}},
	})

	if res := r.runOnce(); res.Updated != 2 || res.Errors != 0 || res.Applications != 2 {
		t.Fatalf("cycle %+v, want two Applications each updated once; status %+v", res, r.status("shop"))
	}
	r.waitDeployed(eu, "web", image+":1.1.0")
	r.waitDeployed(us, "web", image+":1.1.0")
	if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(other), other); err != nil {
		t.Fatal(err)
	}
	if imgs := other.Spec.Source.Kustomize.Images; len(imgs) != 0 {
		t.Errorf("the Application the labels leave out was changed: %v", imgs)
	}
	s := r.status("shop")
	if s.ApplicationsMatched != 2 || s.ImagesManaged != 2 || s.LastCheckedAt == nil || s.LastUpdatedAt == nil || s.ObservedGeneration != 1 {
		t.Errorf("status %+v", s)
	}
	if len(s.RecentUpdates) != 1 || s.RecentUpdates[0].Alias != "web" || s.RecentUpdates[0].NewVersion != "1.1.0" ||
		s.RecentUpdates[0].ApplicationsUpdated != 2 || s.RecentUpdates[0].Image != image {
		t.Errorf("recent updates %+v, want web to 1.1.0 in 2 Applications", s.RecentUpdates)
	}
	if got := condition(s, iuv1.ConditionReady); !strings.HasPrefix(got, "True ReconcileSucceeded: Reconciled 2 applications, 2 images updated") {
		t.Errorf("Ready: %s", got)
	}
	if got := condition(s, iuv1.ConditionError); !strings.HasPrefix(got, "False NoErrors") {
		t.Errorf("Error: %s", got)
	}

	// Nothing new: the updates stay recorded, the check time moves.
	checked := s.LastCheckedAt.Time
	if res := r.runOnce(); res.Updated != 0 || res.Errors != 0 {
		t.Errorf("second cycle %+v, want nothing to do", res)
	}
	if s := r.status("shop"); len(s.RecentUpdates) != 1 || s.LastCheckedAt.Time.Before(checked) {
		t.Errorf("after a cycle with nothing new: %+v", s)
	}
}

// Bad ImageUpdaters each get a condition saying what is wrong, nothing is
// written for them, and a good one beside them still updates its
// Application.
func TestImageUpdaterBadInput(t *testing.T) {
	localcluster.Need(t)
	r := newRig(t, "pullsecret:$NS/pull", "", nil)
	r.dockerConfigSecret("pull", r.reg.Password)
	image := r.image("bad/web")
	r.reg.PushImage(t, "bad/web", t0, "1.0.0")
	r.reg.PushImage(t, "bad/web", t0.Add(time.Hour), "1.1.0")
	r.repo.Commit(t, "web", map[string]string{
		"web/kustomization.yaml": "resources:\n- deployment.yaml\n",
		"web/deployment.yaml":    deploymentYAML("web", image+":1.0.0"),
	})
	kustomize := func(src *v1alpha1.ApplicationSource) { src.Kustomize = &v1alpha1.ApplicationSourceKustomize{} }
	apps := map[string]*v1alpha1.Application{}
	for _, name := range []string{"regexp", "unreachable", "branch", "good"} {
		apps[name] = r.app(name, "web", nil, kustomize)
	}
	only := func(app *v1alpha1.Application, img iuv1.ImageConfig) []iuv1.ApplicationRef {
		return []iuv1.ApplicationRef{{NamePattern: app.Name, Images: []iuv1.ImageConfig{img}}}
	}
	r.imageUpdater("regexp", iuv1.ImageUpdaterSpec{ApplicationRefs: only(apps["regexp"], iuv1.ImageConfig{Alias: "web", ImageName: image,
		CommonUpdateSettings: &iuv1.CommonUpdateSettings{AllowTags: str("regexp:^(1\\.")}})})
	r.imageUpdater("unreachable", iuv1.ImageUpdaterSpec{ApplicationRefs: only(apps["unreachable"], iuv1.ImageConfig{Alias: "web", ImageName: "127.0.0.1:1/nothing/here"})})
	r.imageUpdater("branch", iuv1.ImageUpdaterSpec{
		WriteBackConfig: &iuv1.WriteBackConfig{Method: str("git"), GitConfig: &iuv1.GitConfig{Branch: str("main:{{ if false }}never{{ end }}")}},
		ApplicationRefs: only(apps["branch"], iuv1.ImageConfig{Alias: "web", ImageName: image})})
	r.imageUpdater("pattern", iuv1.ImageUpdaterSpec{ApplicationRefs: []iuv1.ApplicationRef{{NamePattern: "[", UseAnnotations: new(true)}}})
	r.imageUpdater("good", iuv1.ImageUpdaterSpec{ApplicationRefs: only(apps["good"], iuv1.ImageConfig{Alias: "web", ImageName: image})})
	head := r.repo.Head(t, "main")

	if res := r.runOnce(); res.Updated != 1 {
		t.Fatalf("cycle %+v, want the good ImageUpdater's update; its status %+v", res, r.status("good"))
	}
	r.waitDeployed(apps["good"], "web", image+":1.1.0")
	if got := condition(r.status("good"), iuv1.ConditionReady); !strings.HasPrefix(got, "True ReconcileSucceeded") {
		t.Errorf("good: %s", got)
	}
	for name, want := range map[string]string{
		"regexp":      "spec.applicationRefs[" + apps["regexp"].Name + "].images[web].commonUpdateSettings.allowTags",
		"unreachable": "127.0.0.1:1",
		"branch":      "renders an empty branch name",
	} {
		got := condition(r.status(name), iuv1.ConditionError)
		if !strings.HasPrefix(got, "True PartialErrors") || !strings.Contains(got, want) {
			t.Errorf("%s: Error condition %q, want PartialErrors naming %q", name, got, want)
		}
		app := apps[name]
		if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(app), app); err != nil {
			t.Fatal(err)
		}
		if imgs := app.Spec.Source.Kustomize.Images; len(imgs) != 0 {
			t.Errorf("%s: written despite the error: %v", name, imgs)
		}
	}
	if got := condition(r.status("pattern"), iuv1.ConditionReady); !strings.Contains(got, "False ReconcileFailed") || !strings.Contains(got, "namePattern") {
		t.Errorf("pattern: Ready %q, want ReconcileFailed naming namePattern", got)
	}
	if r.repo.Head(t, "main") != head {
		t.Error("a bad ImageUpdater made a commit")
	}
}

// cosignKeys makes a key pair and stores its public key in a Secret.
func (r *rig) cosignKeys(secret string) signature.SignerVerifier {
	r.t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		r.t.Fatal(err)
	}
	sv, err := signature.LoadECDSASignerVerifier(priv, crypto.SHA256)
	if err != nil {
		r.t.Fatal(err)
	}
	pub, err := cryptoutils.MarshalPublicKeyToPEM(priv.Public())
	if err != nil {
		r.t.Fatal(err)
	}
	r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: r.ns}, Data: map[string][]byte{"cosign.pub": pub}})
	return sv
}

// A new version whose signature does not verify with the ImageUpdater's
// cosign key is not written back, with the reason in status and an Event;
// once signed with the key it goes through.
func TestImageUpdaterVerifiesSignatures(t *testing.T) {
	localcluster.Need(t)
	r := newRig(t, "pullsecret:$NS/pull", "", nil)
	r.dockerConfigSecret("pull", r.reg.Password)
	image := r.image("signed/web")
	r.reg.PushImage(t, "signed/web", t0, "1.0.0")
	unsigned := r.reg.PushImage(t, "signed/web", t0.Add(time.Hour), "1.1.0")
	key := r.cosignKeys("org-cosign-pubkey")
	stranger := r.cosignKeys("stranger")
	r.repo.Commit(t, "web", map[string]string{
		"web/kustomization.yaml": "resources:\n- deployment.yaml\n",
		"web/deployment.yaml":    deploymentYAML("web", image+":1.0.0"),
	})
	app := r.app("signed", "web", nil, func(src *v1alpha1.ApplicationSource) { src.Kustomize = &v1alpha1.ApplicationSourceKustomize{} })
	r.imageUpdater("verified", iuv1.ImageUpdaterSpec{
		ImagesVerification: &iuv1.ImagesVerification{CosignKey: &iuv1.SecretRef{SecretName: "org-cosign-pubkey", Key: "cosign.pub"}},
		ApplicationRefs:    []iuv1.ApplicationRef{{NamePattern: app.Name, Images: []iuv1.ImageConfig{{Alias: "web", ImageName: image}}}},
	})
	refused := func(why string) {
		t.Helper()
		if res := r.runOnce(); res.Updated != 0 || res.Errors != 1 {
			t.Fatalf("cycle %+v, want the version refused (%s)", res, why)
		}
		if got := condition(r.status("verified"), iuv1.ConditionError); !strings.Contains(got, why) {
			t.Errorf("Error condition %q, want it to say %q", got, why)
		}
		r.event(app, "ImageVerificationFailed", why)
		if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(app), app); err != nil {
			t.Fatal(err)
		}
		if imgs := app.Spec.Source.Kustomize.Images; len(imgs) != 0 {
			t.Fatalf("written despite the signature: %v", imgs)
		}
	}
	refused("holds no cosign signature for " + unsigned.String())
	r.reg.SignCosign(t, "signed/web", unsigned, stranger)
	refused("signed with another key or altered")

	r.reg.SignCosign(t, "signed/web", unsigned, key)
	if res := r.runOnce(); res.Updated != 1 || res.Errors != 0 {
		t.Fatalf("cycle %+v, want the signed version written", res)
	}
	r.waitDeployed(app, "web", image+":1.1.0")
	if got := condition(r.status("verified"), iuv1.ConditionError); !strings.HasPrefix(got, "False") {
		t.Errorf("Error condition after a verified update: %s", got)
	}
}

// A cosign key that is not a key refuses every version, saying so.
func TestImageUpdaterBadCosignKey(t *testing.T) {
	localcluster.Need(t)
	r := newBareRig(t, "pullsecret:$NS/pull", "", nil)
	r.dockerConfigSecret("pull", r.reg.Password)
	image := r.image("badkey/web")
	r.reg.PushImage(t, "badkey/web", t0, "1.0.0", "1.1.0")
	r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "key", Namespace: r.ns}, StringData: map[string]string{"cosign.pub": "not a key"}})
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "badkey", Namespace: r.ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: "web",
			Kustomize: &v1alpha1.ApplicationSourceKustomize{Images: v1alpha1.KustomizeImages{v1alpha1.KustomizeImage(image + ":1.0.0")}}},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "badkey"}}}
	r.create(app)
	r.imageUpdater("badkey", iuv1.ImageUpdaterSpec{ApplicationRefs: []iuv1.ApplicationRef{{NamePattern: "badkey", Images: []iuv1.ImageConfig{{
		Alias: "web", ImageName: image, ImagesVerification: &iuv1.ImagesVerification{CosignKey: &iuv1.SecretRef{SecretName: "key", Key: "cosign.pub"}}}}}}})
	if res := r.runOnce(); res.Updated != 0 || res.Errors != 1 {
		t.Fatalf("cycle %+v, want the version refused", res)
	}
	if got := condition(r.status("badkey"), iuv1.ConditionError); !strings.Contains(got, "not a PEM public key") {
		t.Errorf("Error condition %q, want it to name the bad key", got)
	}
}

// A pull request write-back pushes the change to the Application's own
// branch and opens one labelled pull request into the base branch; a
// cycle with nothing new leaves both alone; the next version rebuilds the
// branch and updates the same request in place. The base branch is never
// written.
func TestImageUpdaterPullRequest(t *testing.T) {
	localcluster.Need(t)
	r := newBareRig(t, "pullsecret:$NS/pull", "", nil)
	r.dockerConfigSecret("pull", r.reg.Password)
	gh := scmserver.GitHub(t, r.git.Password, "org", "deploy")
	image := r.image("pr/web")
	r.reg.PushImage(t, "pr/web", t0, "1.0.0", "1.1.0")
	repo := r.git.NewRepo(t, "org/deploy")
	repo.Commit(t, "web", map[string]string{
		"web/kustomization.yaml": "resources:\n- deployment.yaml\n",
		"web/deployment.yaml":    deploymentYAML("web", image+":1.0.0"),
	})
	base := repo.Head(t, "main")
	host := r.providerHost(gh.URL)
	api := host + "/api/v3/"
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "pr", Namespace: r.ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: host + "/org/deploy.git", Path: "web", TargetRevision: "main",
			Kustomize: &v1alpha1.ApplicationSourceKustomize{Images: v1alpha1.KustomizeImages{v1alpha1.KustomizeImage(image + ":1.0.0")}}},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "pr"}}}
	r.create(app)
	r.imageUpdater("pr", iuv1.ImageUpdaterSpec{
		WriteBackConfig: &iuv1.WriteBackConfig{Method: str("git"), GitConfig: &iuv1.GitConfig{
			PullRequest: &iuv1.PullRequest{GitHub: &iuv1.PullRequestGitHub{API: api}, Labels: []string{"automated", "images"}}}},
		ApplicationRefs: []iuv1.ApplicationRef{{NamePattern: "pr", Images: []iuv1.ImageConfig{{Alias: "web", ImageName: image}}}},
	})
	head := "image-updater/" + r.ns + "/pr"
	override := "web/.argocd-source-pr.yaml"

	if res := r.runOnce(); res.Updated != 1 || res.Errors != 0 {
		t.Fatalf("first cycle %+v; status %+v", res, r.status("pr"))
	}
	prs := gh.PullRequests()
	if len(prs) != 1 || prs[0].Head != head || prs[0].Base != "main" || prs[0].Title != "build: automatic update of pr" ||
		!strings.Contains(prs[0].Body, "'1.0.0' to '1.1.0'") || strings.Join(prs[0].Labels, ",") != "automated,images" {
		t.Fatalf("pull requests %+v", prs)
	}
	if got := repo.Show(t, head, override); !strings.Contains(got, image+":1.1.0") {
		t.Errorf("%s on %s:\n%s", override, head, got)
	}
	r.event(app, "PullRequestOpened", "#1")

	pushed := repo.Head(t, head)
	if res := r.runOnce(); res.Updated != 0 || res.Errors != 0 {
		t.Errorf("second cycle %+v, want nothing new", res)
	}
	if prs := gh.PullRequests(); repo.Head(t, head) != pushed || len(prs) != 1 || prs[0].Edits != 0 {
		t.Errorf("a cycle with nothing new changed the branch or the request: %+v", prs)
	}

	r.reg.PushImage(t, "pr/web", t0.Add(time.Hour), "1.2.0")
	if res := r.runOnce(); res.Updated != 1 || res.Errors != 0 {
		t.Fatalf("third cycle %+v", res)
	}
	prs = gh.PullRequests()
	if len(prs) != 1 || prs[0].Edits != 1 || !strings.Contains(prs[0].Body, "'1.0.0' to '1.2.0'") {
		t.Errorf("the request was not updated in place: %+v", prs)
	}
	if got := repo.Show(t, head, override); !strings.Contains(got, image+":1.2.0") || repo.Head(t, head) == pushed {
		t.Errorf("%s on %s after 1.2.0:\n%s", override, head, got)
	}
	if repo.Head(t, "main") != base {
		t.Error("the base branch was written")
	}
	if s := r.status("pr"); len(s.RecentUpdates) != 1 || s.RecentUpdates[0].NewVersion != "1.2.0" {
		t.Errorf("recent updates %+v", s.RecentUpdates)
	}
}

// providerHost serves the rig's Git server and a provider's API (at
// /api/, api being its address) on one host and port, as GitHub
// Enterprise and GitLab do: a repository's token is only ever sent to its
// own host. The rig's credentials cover it.
func (r *rig) providerHost(api string) string {
	r.t.Helper()
	to := func(target string) http.Handler {
		u, err := url.Parse(target)
		if err != nil {
			r.t.Fatal(err)
		}
		u.Path = ""
		return httputil.NewSingleHostReverseProxy(u)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", to(api))
	mux.Handle("/", to(r.git.URL))
	front := httptest.NewServer(mux)
	r.t.Cleanup(front.Close)
	r.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "front-creds", Namespace: r.ns, Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepoCredentials}},
		StringData: map[string]string{"url": front.URL, "username": r.git.Username, "password": r.git.Password},
	})
	return front.URL
}

// An updater leaves alone the ImageUpdaters of namespaces it does not
// watch, and then reads no annotations in its own namespace either: with
// Argo CD Image Updater owning the ImageUpdaters there, the two never
// update the same Application. The updater that watches it does.
func TestImageUpdaterOwnedByAnotherUpdater(t *testing.T) {
	localcluster.Need(t)
	elsewhere := cluster.NewNamespace(t)
	r := newBareRig(t, "pullsecret:$NS/pull", "", func(o *Options) { o.WatchNamespaces = []string{elsewhere} })
	r.dockerConfigSecret("pull", r.reg.Password)
	image := r.image("owned/web")
	r.reg.PushImage(t, "owned/web", t0, "1.0.0", "1.1.0")
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: r.ns, Annotations: map[string]string{p + "image-list": "web=" + image}},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: "web",
			Kustomize: &v1alpha1.ApplicationSourceKustomize{Images: v1alpha1.KustomizeImages{v1alpha1.KustomizeImage(image + ":1.0.0")}}},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "owned"}}}
	r.create(app)
	r.imageUpdater("theirs", iuv1.ImageUpdaterSpec{ApplicationRefs: []iuv1.ApplicationRef{{NamePattern: "*", UseAnnotations: new(true)}}})

	if res := r.runOnce(); res.Applications != 0 || res.Updated != 0 {
		t.Errorf("the updater not watching %s: %+v", r.ns, res)
	}
	if s := r.status("theirs"); s.LastCheckedAt != nil {
		t.Errorf("it wrote the status of an ImageUpdater it does not watch: %+v", s)
	}
	mine := New(Options{Client: r.c, Namespace: r.ns, Log: r.u.opts.Log})
	if res, err := mine.RunOnce(r.ctx); err != nil || res.Updated != 1 {
		t.Fatalf("the updater watching %s: %+v %v", r.ns, res, err)
	}
	if got := r.spec("owned").Source.Kustomize.Images; len(got) != 1 || string(got[0]) != image+":1.1.0" {
		t.Errorf("images %v", got)
	}
}
