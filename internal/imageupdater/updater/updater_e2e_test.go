package updater

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/imageupdater/writeback"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

const p = config.Prefix

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// dockerConfigSecret is a kubernetes.io/dockerconfigjson Secret for the
// rig's registry.
func (r *rig) dockerConfigSecret(name, password string) {
	auth := base64.StdEncoding.EncodeToString([]byte(r.reg.Username + ":" + password))
	r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns}, Type: corev1.SecretTypeDockerConfigJson,
		StringData: map[string]string{corev1.DockerConfigJsonKey: fmt.Sprintf(`{"auths":{"%s":{"auth":"%s"}}}`, r.reg.Host, auth)}})
}

// Image Updater's two documented Kustomize setups, both writing back to
// Git: production follows
// semver and ignores latest (a Kustomize app: the new tag goes to
// .argocd-source-<app>.yaml); development follows the newest build among
// commit-SHA tags (a plain-directory app: the manifest is edited in
// place), on a multi-arch image. Registry credentials come from a
// pullsecret in registries.conf.
func TestKustomizeSetupsWriteBackToGit(t *testing.T) {
	localcluster.Need(t)
	r := newRig(t, "pullsecret:$NS/argocd-image-updater-docker-registry-secret", "", nil)
	r.dockerConfigSecret("argocd-image-updater-docker-registry-secret", r.reg.Password)
	prodImage, devImage := r.image("some-gcp-project/prod"), r.image("some-gcp-project/dev")
	r.reg.PushImage(t, "some-gcp-project/prod", t0, "1.0.0")
	r.reg.PushImage(t, "some-gcp-project/prod", t0.Add(time.Hour), "1.1.0")
	r.reg.PushImage(t, "some-gcp-project/prod", t0.Add(2*time.Hour), "1.2.0-rc1", "latest")
	r.reg.PushImage(t, "some-gcp-project/dev", t0, "a1b2c3d")
	r.reg.PushIndex(t, "some-gcp-project/dev", "0f0f0f0", t0.Add(30*time.Minute), "linux/amd64") // no arm64: left out
	r.reg.PushIndex(t, "some-gcp-project/dev", "e4f5a6b7c8", t0.Add(time.Hour), "linux/amd64", "linux/arm64")
	r.reg.PushImage(t, "some-gcp-project/dev", t0.Add(2*time.Hour), "latest", "test")
	r.repo.Commit(t, "apps", map[string]string{
		"prod/kustomization.yaml": "resources:\n- deployment.yaml\n",
		"prod/deployment.yaml":    deploymentYAML("prod", prodImage+":1.0.0"),
		"dev/deployment.yaml":     deploymentYAML("dev", devImage+":a1b2c3d"),
	})

	prod := r.app("prod", "prod", map[string]string{
		p + "write-back-method":        "git",
		p + "image-list":               "my-image=" + prodImage,
		p + "my-image.update-strategy": "semver",
		p + "my-image.ignore-tags":     "latest",
	}, nil)
	dev := r.app("dev", "dev", map[string]string{
		p + "write-back-method":        "git",
		p + "image-list":               "my-image=" + devImage,
		p + "my-image.update-strategy": "latest",
		p + "my-image.allow-tags":      "regexp:^[0-9a-f]{5,40}$",
		p + "my-image.ignore-tags":     "latest",
		p + "my-image.platforms":       "linux/arm64",
	}, nil)

	res := r.runOnce()
	if res.Updated != 2 || res.Errors != 0 {
		t.Fatalf("cycle %+v, want 2 images updated", res)
	}
	r.waitDeployed(prod, "prod", prodImage+":1.1.0")
	r.waitDeployed(dev, "dev", devImage+":e4f5a6b7c8")
	r.repo.Pull(t)
	override := r.repo.File(t, "prod/.argocd-source-"+prod.Name+".yaml")
	if want := "kustomize:\n  images:\n  - " + prodImage + ":1.1.0\n"; override != want {
		t.Errorf(".argocd-source-%s.yaml:\n%s\nwant\n%s", prod.Name, override, want)
	}
	if got := r.repo.File(t, "dev/deployment.yaml"); got != deploymentYAML("dev", devImage+":e4f5a6b7c8") {
		t.Errorf("dev/deployment.yaml was not edited in place:\n%s", got)
	}
	log := strings.Join(r.repo.Log(t, "main", 2), "\n")
	for _, want := range []string{"build: automatic update of " + prod.Name, "build: automatic update of " + dev.Name, "<argocd-image-updater noreply@argoproj.io>"} {
		if !strings.Contains(log, want) {
			t.Errorf("git log lacks %q:\n%s", want, log)
		}
	}
	r.event(prod, "ImagesUpdated", `from "1.0.0" to "1.1.0"`)
	r.event(prod, "NewestTagFound", "newest tag allowed for image "+prodImage+` is "1.1.0" (semver)`)

	// Nothing new: no commit.
	head := r.repo.Head(t, "main")
	if res := r.runOnce(); res.Updated != 0 || res.Errors != 0 {
		t.Errorf("second cycle %+v, want nothing to do", res)
	}
	if r.repo.Head(t, "main") != head {
		t.Error("a cycle with nothing new made a commit")
	}

	// CI pushes 1.2.0: it is committed and deployed.
	r.reg.PushImage(t, "some-gcp-project/prod", t0.Add(3*time.Hour), "1.2.0")
	if res := r.runOnce(); res.Updated != 1 {
		t.Errorf("third cycle %+v, want 1 update", res)
	}
	r.waitDeployed(prod, "prod", prodImage+":1.2.0")
	r.event(prod, "NewestTagFound", `"1.2.0"`)
	if n := r.eventCount(prod, "NewestTagFound"); n != 2 {
		t.Errorf("%d NewestTagFound events over three cycles and two new tags, want 2", n)
	}
}

// Image Updater's documented Helm setup: the new tag goes into values.yaml
// (image.repository and image.tag), on main, with its own commit
// message; registry credentials come from an ext: script, reused until
// credsexpire.
func TestHelmValuesWriteBack(t *testing.T) {
	localcluster.Need(t)
	script := filepath.Join(t.TempDir(), "ecr-login.sh")
	calls := filepath.Join(t.TempDir(), "calls")
	r := newRig(t, "ext:"+script, "10h", nil)
	if err := os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\necho x >> %s\necho %s:%s\n", calls, r.reg.Username, r.reg.Password)), 0o755); err != nil {
		t.Fatal(err)
	}
	image := r.image("foo")
	r.reg.PushImage(t, "foo", t0, "v1.0.0")
	r.reg.PushImage(t, "foo", t0.Add(time.Hour), "v1.1.0", "latest")
	r.reg.PushImage(t, "foo", t0.Add(2*time.Hour), "v1.2.0-rc1", "1.3.0")
	values := fmt.Sprintf(`# 既定値
replicaCount: 1
image:
  # CI が push するリポジトリ
  repository: %s
  tag: "v1.0.0" # 初期リリース
  pullPolicy: IfNotPresent
`, image)
	r.repo.Commit(t, "chart", map[string]string{
		"foo/Chart.yaml":  "apiVersion: v2\nname: foo\nversion: 0.1.0\n",
		"foo/values.yaml": values,
		"foo/templates/deployment.yaml": strings.Replace(deploymentYAML("foo", "IMAGE"), "IMAGE # set by the image updater",
			`"{{ .Values.image.repository }}:{{ .Values.image.tag }}"`, 1),
	})
	app := r.app("foo-application", "foo", map[string]string{
		p + "image-list":                "foo-image=" + image,
		p + "write-back-target":         "helmvalues:values.yaml",
		p + "foo-image.allow-tags":      `regexp:^v[0-9]+\.[0-9]+\.[0-9]+$`,
		p + "foo-image.helm.image-name": "image.repository",
		p + "foo-image.helm.image-tag":  "image.tag",
		p + "write-back-method":         "git",
		p + "git.branch":                "main",
		p + "git.commit-message":        "イメージのタグを {{ .tag }} に更新しました",
	}, nil)

	if res := r.runOnce(); res.Updated != 1 || res.Errors != 0 {
		t.Fatalf("cycle %+v, want 1 update", res)
	}
	r.waitDeployed(app, "foo", image+":v1.1.0")
	r.repo.Pull(t)
	if got, want := r.repo.File(t, "foo/values.yaml"), strings.Replace(values, `"v1.0.0"`, `"v1.1.0"`, 1); got != want {
		t.Errorf("values.yaml:\n%s\nwant (comments and layout kept)\n%s", got, want)
	}
	if got := r.repo.Log(t, "main", 1)[0]; !strings.HasPrefix(got, "イメージのタグを v1.1.0 に更新しました") {
		t.Errorf("commit %q", got)
	}
	r.runOnce()
	data, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "x"); n != 1 {
		t.Errorf("the ext: script ran %d times in two cycles, want 1 (credsexpire 10h)", n)
	}
}

// A kustomization edited in place (credentials from secret:), argocd
// write-back through the Kubernetes API for Kustomize (credentials from
// env:, which only registries.conf may name) and Helm, and a malformed
// annotation that stops only its image.
func TestKustomizationTargetAndArgoCDWriteBack(t *testing.T) {
	localcluster.Need(t)
	r := newRig(t, "env:CAPSTAN_TEST_REGISTRY_CREDS", "", nil)
	t.Setenv("CAPSTAN_TEST_REGISTRY_CREDS", r.reg.Username+":"+r.reg.Password)
	r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry-robot", Namespace: r.ns},
		StringData: map[string]string{"creds": r.reg.Username + ":" + r.reg.Password}})
	r.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "git-writer", Namespace: r.ns},
		StringData: map[string]string{"username": r.git.Username, "password": r.git.Password}})
	api, web := r.image("team/api"), r.image("team/web")
	r.reg.PushImage(t, "team/api", t0, "1.0.0")
	r.reg.PushImage(t, "team/api", t0.Add(time.Hour), "1.1.0")
	latest := r.reg.PushImage(t, "team/api", t0.Add(2*time.Hour), "latest")
	r.reg.PushImage(t, "team/web", t0, "2.0.0")
	r.reg.PushImage(t, "team/web", t0.Add(time.Hour), "2.1.0")
	kustomization := "# the API\nresources:\n- deployment.yaml\nimages:\n- name: api # updated by the image updater\n  newName: " + api + "\n  newTag: 1.0.0\n"
	r.repo.Commit(t, "apps", map[string]string{
		"kt/kustomization.yaml": kustomization,
		"kt/deployment.yaml":    deploymentYAML("kt", "api:latest"),
		"ka/kustomization.yaml": "resources:\n- deployment.yaml\n",
		"ka/deployment.yaml":    deploymentYAML("ka", api+":1.0.0") + "---\n" + deploymentYAML("ka-web", web+":2.0.0"),
		"kd/kustomization.yaml": "resources:\n- deployment.yaml\n",
		"kd/deployment.yaml":    deploymentYAML("kd", api+":1.0.0"),
		"ha/Chart.yaml":         "apiVersion: v2\nname: ha\nversion: 0.1.0\n",
		"ha/values.yaml":        "image:\n  name: " + web + "\n  tag: 2.0.0\n",
		"ha/templates/deployment.yaml": strings.Replace(deploymentYAML("ha", "IMAGE"), "IMAGE # set by the image updater",
			`"{{ .Values.image.name }}:{{ .Values.image.tag }}"`, 1),
	})
	kt := r.app("kt", "kt", map[string]string{
		p + "image-list":               "api=" + api,
		p + "api.kustomize.image-name": "api",
		p + "api.pull-secret":          "secret:" + r.ns + "/registry-robot#creds",
		p + "write-back-method":        "git:secret:" + r.ns + "/git-writer",
		p + "write-back-target":        "kustomization",
	}, nil)
	kd := r.app("kd", "kd", map[string]string{
		p + "image-list":          "api=" + api + ":latest",
		p + "api.update-strategy": "digest",
	}, nil)
	ka := r.app("ka", "ka", map[string]string{
		p + "image-list":          "api=" + api + ",web=" + web,
		p + "web.update-strategy": "newest",
	}, func(s *v1alpha1.ApplicationSource) { s.Kustomize = &v1alpha1.ApplicationSourceKustomize{} })
	ha := r.app("ha", "ha", map[string]string{
		p + "image-list": "web=" + web,
	}, nil)

	var cm corev1.ConfigMap
	if err := r.c.Get(r.ctx, client.ObjectKey{Namespace: r.ns, Name: config.ConfigMapName}, &cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["git.user"], cm.Data["git.email"] = "ci-bot", "ci-bot@example.com"
	cm.Data["git.commit-message-template"] = "chore({{ .AppName }}): {{ range .AppChanges }}{{ .Image }} {{ .OldTag }} -> {{ .NewTag }}{{ end }}"
	if err := r.c.Update(r.ctx, &cm); err != nil {
		t.Fatal(err)
	}

	res := r.runOnce()
	if res.Updated != 4 {
		t.Errorf("cycle %+v, want 4 updates (kt's, ka's and kd's api, ha's web)", res)
	}
	r.waitDeployed(kd, "kd", api+"@"+latest.String())
	r.waitDeployed(kt, "kt", api+":1.1.0")
	r.repo.Pull(t)
	if got := r.repo.File(t, "kt/kustomization.yaml"); got != strings.Replace(kustomization, "newTag: 1.0.0", "newTag: 1.1.0", 1) {
		t.Errorf("kustomization.yaml:\n%s", got)
	}
	if got, want := r.repo.Log(t, "main", 1)[0], fmt.Sprintf("chore(%s): %s 1.0.0 -> 1.1.0 <ci-bot ci-bot@example.com>", kt.Name, api); got != want {
		t.Errorf("commit %q, want %q (the ConfigMap's template and author)", got, want)
	}

	r.waitDeployed(ka, "ka", api+":1.1.0")
	r.waitDeployed(ka, "ka-web", web+":2.0.0")
	msg := r.event(ka, "InvalidAnnotation", p+"web.update-strategy")
	if !strings.Contains(msg, `"newest"`) {
		t.Errorf("event %q should quote the bad value", msg)
	}
	if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(ka), ka); err != nil {
		t.Fatal(err)
	}
	if got := ka.Spec.Source.Kustomize.Images; len(got) != 1 || string(got[0]) != api+":1.1.0" {
		t.Errorf("ka's kustomize images %v", got)
	}

	r.waitDeployed(ha, "ha", web+":2.1.0")
	if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(ha), ha); err != nil {
		t.Fatal(err)
	}
	want := []v1alpha1.HelmParameter{{Name: "image.name", Value: web, ForceString: true}, {Name: "image.tag", Value: "2.1.0", ForceString: true}}
	if got := ha.Spec.Source.Helm.Parameters; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ha's helm parameters %+v, want %+v", got, want)
	}
}

// Wrong credentials and an unreachable registry are errors on the
// Application, and nothing is written anywhere.
func TestFailuresWriteNothing(t *testing.T) {
	localcluster.Need(t)
	r := newRig(t, "", "", nil)
	r.dockerConfigSecret("wrong-creds", "not-the-password")
	image := r.image("team/locked")
	r.reg.PushImage(t, "team/locked", t0, "1.0.0")
	r.reg.PushImage(t, "team/locked", t0.Add(time.Hour), "1.1.0")
	r.dockerConfigSecret("right-creds", r.reg.Password)
	r.repo.Commit(t, "apps", map[string]string{
		"locked/deployment.yaml": deploymentYAML("locked", image+":1.0.0"),
		"kz/kustomization.yaml":  "resources:\n- deployment.yaml\n",
		"kz/deployment.yaml":     deploymentYAML("kz", image+":1.0.0"),
	})
	wrong := r.app("locked", "locked", map[string]string{
		p + "image-list":        image,
		p + "pull-secret":       "pullsecret:" + r.ns + "/wrong-creds",
		p + "write-back-method": "git",
	}, nil)
	down := r.app("down", "locked", map[string]string{
		p + "image-list":        "127.0.0.1:1/team/locked",
		p + "write-back-method": "git",
		p + "force-update":      "true",
	}, nil)
	// A malformed write-back method must not fall back to writing the spec.
	badMethod := r.app("bad-method", "kz", map[string]string{
		p + "image-list":        image,
		p + "pull-secret":       "pullsecret:" + r.ns + "/right-creds",
		p + "write-back-method": "git:secret:no-namespace",
	}, nil)
	head := r.repo.Head(t, "main")
	if res := r.runOnce(); res.Updated != 0 || res.Errors != 2 {
		t.Errorf("cycle %+v, want 2 errors and no update", res)
	}
	r.event(badMethod, "InvalidAnnotation", p+"write-back-method")
	if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(badMethod), badMethod); err != nil {
		t.Fatal(err)
	}
	if k := badMethod.Spec.Source.Kustomize; k != nil && len(k.Images) > 0 {
		t.Errorf("a malformed write-back method wrote the spec: %v", k.Images)
	}
	r.event(wrong, "ImageCheckFailed", "refused the credentials")
	r.event(down, "ImageCheckFailed", "127.0.0.1:1")
	if r.repo.Head(t, "main") != head {
		t.Error("a failed check committed to Git")
	}
	var d = wrong.DeepCopy()
	if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(wrong), d); err != nil {
		t.Fatal(err)
	}
	if d.Spec.Source.Kustomize != nil || d.Spec.Source.Helm != nil {
		t.Errorf("a failed check changed the spec: %+v", d.Spec.Source)
	}
}

// racingCommitter lets someone else push to the branch while the
// updater edits its checkout, once.
type racingCommitter struct {
	next writeback.Committer
	race func()
	once sync.Once
}

func (r *racingCommitter) Commit(ctx context.Context, url string, creds git.Creds, c git.Change) (string, error) {
	edit := c.Edit
	c.Edit = func(dir string) error {
		r.once.Do(r.race)
		return edit(dir)
	}
	return r.next.Commit(ctx, url, creds, c)
}

// A push to the branch between the updater's fetch and its push: the
// push is rejected, the change is made again on the new tip and pushed,
// and the other commit is kept.
func TestConcurrentPushIsReapplied(t *testing.T) {
	localcluster.Need(t)
	r := newBareRig(t, "", "", nil)
	r.dockerConfigSecret("pull", r.reg.Password)
	image := r.image("team/racy")
	r.reg.PushImage(t, "team/racy", t0, "1.0.0", "1.1.0")
	r.repo.Commit(t, "app", map[string]string{"racy/deployment.yaml": deploymentYAML("racy", image+":1.0.0")})
	r.u.opts.Git = &racingCommitter{next: r.u.opts.Git, race: func() {
		r.repo.Commit(t, "someone else", map[string]string{"racy/service.yaml": "kind: Service\n"})
	}}
	r.create(&v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "racy", Namespace: r.ns, Annotations: map[string]string{
			p + "image-list":        image,
			p + "pull-secret":       "pullsecret:" + r.ns + "/pull",
			p + "force-update":      "true",
			p + "write-back-method": "git",
		}},
		Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: "racy", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "racy"}},
	})
	if res := r.runOnce(); res.Updated != 1 || res.Errors != 0 {
		t.Fatalf("cycle %+v, want the update pushed despite the race", res)
	}
	log := r.repo.Log(t, "main", 3)
	if !strings.HasPrefix(log[0], "build: automatic update of racy") || !strings.HasPrefix(log[1], "someone else") {
		t.Errorf("main: %q, want the update on top of the other push", log)
	}
	r.repo.Pull(t)
	if got := r.repo.File(t, "racy/deployment.yaml"); got != deploymentYAML("racy", image+":1.1.0") {
		t.Errorf("deployment.yaml:\n%s", got)
	}
	if got := r.repo.File(t, "racy/service.yaml"); got != "kind: Service\n" {
		t.Errorf("the other push's file: %q", got)
	}
}
