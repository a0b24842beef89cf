package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/imageupdater/tags"
)

func annotations(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[Prefix+kv[i]] = kv[i+1]
	}
	return m
}

// TestSeedAnnotations reads the annotations of seeds 002 and 004 as written.
func TestSeedAnnotations(t *testing.T) {
	// The documented Kustomize setup, development.
	app, errs := Parse(annotations(
		"write-back-method", "git",
		"image-list", "my-image=asia.gcr.io/some-gcp-project/some-image-name",
		"my-image.update-strategy", "latest",
		"my-image.allow-tags", "regexp:^[0-9a-f]{5,40}$",
		"my-image.ignore-tags", "latest",
	))
	if len(errs) > 0 || len(app.Images) != 1 {
		t.Fatalf("kustomize development: %v %+v", errs, app)
	}
	img := app.Images[0]
	if img.Alias != "my-image" || img.Name != "asia.gcr.io/some-gcp-project/some-image-name" || img.Strategy != tags.NewestBuild ||
		!img.Filter.Allows("f00ba47") || img.Filter.Allows("latest") || app.WriteBack.Method != "git" {
		t.Errorf("kustomize development: %+v %+v", img, app.WriteBack)
	}

	// The documented Helm setup, with write-back to values.yaml.
	app, errs = Parse(annotations(
		"image-list", "foo-image=123456789012.dkr.ecr.ap-northeast-1.amazonaws.com/foo",
		"write-back-target", "helmvalues:values.yaml",
		"foo-image.allow-tags", `regexp:^v[0-9]+\.[0-9]+\.[0-9]+$`,
		"foo-image.helm.image-name", "image.repository",
		"foo-image.helm.image-tag", "image.tag",
		"write-back-method", "git",
		"git.branch", "main",
		"git.commit-message", "イメージのタグを {{ .tag }} に更新しました",
	))
	if len(errs) > 0 || len(app.Images) != 1 {
		t.Fatalf("helm: %v", errs)
	}
	img, wb := app.Images[0], app.WriteBack
	if img.Strategy != tags.Semver || img.HelmImageName != "image.repository" || img.HelmImageTag != "image.tag" ||
		wb.Target != "helmvalues" || wb.TargetPath != "values.yaml" || wb.Branch != "main" || !strings.Contains(wb.CommitMessage, "{{ .tag }}") {
		t.Errorf("helm: %+v %+v", img, wb)
	}
}

func TestImageListAndDefaults(t *testing.T) {
	app, errs := Parse(annotations(
		"image-list", "nginx:1.x, web=registry.local:5000/team/web, plain/image",
		"update-strategy", "alphabetical",
		"web.update-strategy", "digest",
		"ignore-tags", "dev, *-debug",
		"web.force-update", "true",
		"web.platforms", "linux/amd64,linux/arm64/v8",
		"web.pull-secret", "pullsecret:argocd/regcred",
		"write-back-method", "git:secret:argocd/git-creds",
		"git-branch", "main:image-updates-{{.SHA256}}",
	))
	if len(errs) > 0 || len(app.Images) != 3 {
		t.Fatalf("%v %+v", errs, app)
	}
	nginx, web, plain := app.Images[0], app.Images[1], app.Images[2]
	if nginx.Name != "nginx" || nginx.Constraint != "1.x" || nginx.Strategy != tags.Alphabetical || nginx.Filter.Allows("x-debug") {
		t.Errorf("nginx: %+v", nginx)
	}
	if web.Name != "registry.local:5000/team/web" || web.Constraint != "" || web.Strategy != tags.Digest || !web.ForceUpdate ||
		len(web.Platforms) != 2 || web.PullSecret != "pullsecret:argocd/regcred" {
		t.Errorf("web: %+v", web)
	}
	if plain.Name != "plain/image" || plain.Alias != "" {
		t.Errorf("plain: %+v", plain)
	}
	if wb := app.WriteBack; wb.Method != "git" || wb.Secret != "argocd/git-creds" || wb.Branch != "main:image-updates-{{.SHA256}}" {
		t.Errorf("write-back: %+v", wb)
	}
	if app, errs := Parse(map[string]string{"other": "x"}); app != nil || errs != nil {
		t.Errorf("an app without image-list: %+v %v", app, errs)
	}
}

// TestMalformedAnnotationsAreNamed: each bad annotation is an error that
// names it, and the other images are still read.
func TestMalformedAnnotationsAreNamed(t *testing.T) {
	app, errs := Parse(annotations(
		"image-list", "good=nginx, bad=redis, worse=postgres, =nameless",
		"bad.update-strategy", "newest",
		"worse.allow-tags", "regexp:(",
		"write-back-method", "svn",
		"write-back-target", "plain",
	))
	if len(app.Images) != 1 || app.Images[0].Alias != "good" || app.WriteBackErr == nil {
		t.Errorf("the good image is still read, and write-back is marked unusable: %+v", app)
	}
	var named []string
	for _, err := range errs {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%v is not an annotation error", err)
		}
		named = append(named, e.Annotation)
	}
	if got := strings.Join(named, " "); got != "write-back-method bad.update-strategy worse.allow-tags image-list" {
		t.Errorf("errors name %q", got)
	}
	if !strings.Contains(errs[1].Error(), Prefix+"bad.update-strategy") {
		t.Errorf("the message names the full annotation: %v", errs[1])
	}
	_, errs = Parse(annotations("image-list", "x", "write-back-target", "base/kustomization.yaml", "platforms", "linux", "force-update", "yes"))
	if len(errs) != 2 {
		t.Errorf("write-back-target and platforms errors: %v", errs)
	}
}
