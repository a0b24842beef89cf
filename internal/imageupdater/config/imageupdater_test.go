package config

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	iuv1 "github.com/capstan-cd/capstan/api/imageupdater/v1alpha1"
	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/tags"
)

func ptr[T any](v T) *T { return &v }

func application(name string, labels map[string]string) *v1alpha1.Application {
	return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd", Labels: labels}}
}

func TestMostSpecificReferenceSelects(t *testing.T) {
	iu := &iuv1.ImageUpdater{ObjectMeta: metav1.ObjectMeta{Name: "iu", Namespace: "argocd"}, Spec: iuv1.ImageUpdaterSpec{ApplicationRefs: []iuv1.ApplicationRef{
		{NamePattern: "*"},
		{NamePattern: "app-*"},
		{NamePattern: "app-prod-*"},
		{NamePattern: "app-*", LabelSelectors: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}},
		{NamePattern: "app-prod-eu"},
		{NamePattern: "a[pq]p-?"},
	}}}
	for _, c := range []struct {
		app    string
		labels map[string]string
		want   string
	}{
		{"app-prod-eu", map[string]string{"tier": "web"}, "app-prod-eu"}, // an exact name first
		{"app-prod-us", map[string]string{"tier": "web"}, "app-*"},       // a selector before more literals
		{"app-prod-us", nil, "app-prod-*"},
		{"app-dev", nil, "app-*"},
		{"app-x", nil, "app-*"}, // a[pq]p-? has fewer literal characters
		{"other", nil, "*"},
	} {
		ref := SelectingRef(iu, application(c.app, c.labels))
		got := "none"
		if ref != nil {
			got = ref.NamePattern
			if ref.LabelSelectors != nil {
				got += " with labels"
			}
		}
		want := c.want
		if c.labels != nil && c.want == "app-*" {
			want += " with labels"
		}
		if got != want {
			t.Errorf("%s %v: selected by %s, want %s", c.app, c.labels, got, want)
		}
	}
}

func TestSettingsMergeSpecReferenceImage(t *testing.T) {
	iu := &iuv1.ImageUpdater{ObjectMeta: metav1.ObjectMeta{Name: "iu", Namespace: "argocd"}, Spec: iuv1.ImageUpdaterSpec{
		CommonUpdateSettings: &iuv1.CommonUpdateSettings{UpdateStrategy: ptr("semver"), IgnoreTags: []string{"latest"}, Platforms: []string{"linux/amd64"}},
		WriteBackConfig:      &iuv1.WriteBackConfig{Method: ptr("git:secret:git-creds"), GitConfig: &iuv1.GitConfig{Branch: ptr("main"), Repository: ptr("https://git.example/org/deploy.git")}},
		ImagesVerification:   &iuv1.ImagesVerification{CosignKey: &iuv1.SecretRef{SecretName: "keys", Key: "cosign.pub"}},
		ApplicationRefs: []iuv1.ApplicationRef{{
			NamePattern:          "web",
			CommonUpdateSettings: &iuv1.CommonUpdateSettings{UpdateStrategy: ptr("newest-build")},
			WriteBackConfig:      &iuv1.WriteBackConfig{GitConfig: &iuv1.GitConfig{WriteBackTarget: ptr("helmvalues:/charts/web/values.yaml")}},
			Images: []iuv1.ImageConfig{
				{Alias: "web", ImageName: "ghcr.io/org/web"},
				{Alias: "sidecar.proxy", ImageName: "ghcr.io/org/proxy:1.x", CommonUpdateSettings: &iuv1.CommonUpdateSettings{UpdateStrategy: ptr("semver")},
					ManifestTarget:     &iuv1.ManifestTarget{Helm: &iuv1.HelmTarget{Name: ptr("proxy.repository"), Tag: ptr("proxy.tag")}},
					ImagesVerification: &iuv1.ImagesVerification{Enabled: ptr(false)}},
				{Alias: "cmp", ImageName: "ghcr.io/org/cmp", ManifestTarget: &iuv1.ManifestTarget{Plugin: &iuv1.PluginTarget{Spec: ptr("CMP_IMAGE")}}},
			},
		}},
	}}
	conf, errs := ForApplication(iu, application("web", nil))
	if len(errs) != 0 || conf == nil || len(conf.Images) != 3 {
		t.Fatalf("%+v %v", conf, errs)
	}
	web, proxy, cmp := conf.Images[0], conf.Images[1], conf.Images[2]
	if web.Strategy != tags.NewestBuild || !web.Filter.Allows("1.0") || web.Filter.Allows("latest") || fmt.Sprint(web.Platforms) != "[linux/amd64]" {
		t.Errorf("web takes the reference's strategy and the spec's filters: %+v", web)
	}
	if v := web.Verify; v == nil || v.Namespace != "argocd" || v.Secret != "keys" || v.Key != "cosign.pub" {
		t.Errorf("web is verified with the spec's key: %+v", v)
	}
	if proxy.Strategy != tags.Semver || proxy.Constraint != "1.x" || proxy.HelmImageName != "proxy.repository" || proxy.HelmImageTag != "proxy.tag" || proxy.Verify != nil {
		t.Errorf("proxy: %+v", proxy)
	}
	if cmp.PluginSpec != "CMP_IMAGE" || !cmp.HasPluginTarget() {
		t.Errorf("cmp: %+v", cmp)
	}
	wb := conf.WriteBack
	if wb.Method != WriteBackGit || wb.Secret != "argocd/git-creds" || wb.Branch != "main" || wb.Target != TargetHelmValues ||
		wb.TargetPath != "/charts/web/values.yaml" || wb.Repository != "https://git.example/org/deploy.git" {
		t.Errorf("write-back %+v", wb)
	}
}

func TestImageUpdaterErrorsNameTheField(t *testing.T) {
	iu := func(spec iuv1.ImageUpdaterSpec) *iuv1.ImageUpdater {
		return &iuv1.ImageUpdater{ObjectMeta: metav1.ObjectMeta{Name: "iu", Namespace: "argocd"}, Spec: spec}
	}
	refs := func(img iuv1.ImageConfig) []iuv1.ApplicationRef {
		return []iuv1.ApplicationRef{{NamePattern: "app", Images: []iuv1.ImageConfig{img}, WriteBackConfig: &iuv1.WriteBackConfig{Method: ptr("git")}}}
	}
	for _, c := range []struct {
		name string
		iu   *iuv1.ImageUpdater
		want string
	}{
		{"regexp", iu(iuv1.ImageUpdaterSpec{ApplicationRefs: refs(iuv1.ImageConfig{Alias: "a", ImageName: "x",
			CommonUpdateSettings: &iuv1.CommonUpdateSettings{AllowTags: ptr("regexp:(")}})}),
			"spec.applicationRefs[app].images[a].commonUpdateSettings.allowTags"},
		{"strategy", iu(iuv1.ImageUpdaterSpec{CommonUpdateSettings: &iuv1.CommonUpdateSettings{UpdateStrategy: ptr("best")}, ApplicationRefs: refs(iuv1.ImageConfig{Alias: "a", ImageName: "x"})}),
			"spec.commonUpdateSettings.updateStrategy"},
		{"secret elsewhere", iu(iuv1.ImageUpdaterSpec{WriteBackConfig: &iuv1.WriteBackConfig{Method: ptr("git:secret:kube-system/admin")}, ApplicationRefs: []iuv1.ApplicationRef{{NamePattern: "app", Images: []iuv1.ImageConfig{{Alias: "a", ImageName: "x"}}}}}),
			"spec.writeBackConfig.method: \"git:secret:kube-system/admin\": the Secret must be in the ImageUpdater's namespace argocd"},
		{"pull request branch", iu(iuv1.ImageUpdaterSpec{WriteBackConfig: &iuv1.WriteBackConfig{GitConfig: &iuv1.GitConfig{Branch: ptr("main:update"),
			PullRequest: &iuv1.PullRequest{GitHub: &iuv1.PullRequestGitHub{}}}}, ApplicationRefs: refs(iuv1.ImageConfig{Alias: "a", ImageName: "x"})}),
			"spec.writeBackConfig.gitConfig.pullRequest: the branch \"main:update\" has the base:target form"},
		{"verification without key", iu(iuv1.ImageUpdaterSpec{ImagesVerification: &iuv1.ImagesVerification{}, ApplicationRefs: refs(iuv1.ImageConfig{Alias: "a", ImageName: "x"})}),
			"spec.applicationRefs[app].images[a].imagesVerification: verification is enabled but no cosignKey"},
		{"image name", iu(iuv1.ImageUpdaterSpec{ApplicationRefs: refs(iuv1.ImageConfig{Alias: "a", ImageName: "x,y=z"})}),
			"spec.applicationRefs[app].images[a].imageName: \"x,y=z\" is not an image name"},
	} {
		_, errs := ForApplication(c.iu, application("app", nil))
		if got := fmt.Sprint(errs); !strings.Contains(got, c.want) {
			t.Errorf("%s: %s, want %q", c.name, got, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	iu := &iuv1.ImageUpdater{ObjectMeta: metav1.ObjectMeta{Name: "iu", Namespace: "argocd"}, Spec: iuv1.ImageUpdaterSpec{Namespace: "other",
		ApplicationRefs: []iuv1.ApplicationRef{
			{NamePattern: "["},
			{NamePattern: "ok", LabelSelectors: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Like"}}}},
		}}}
	err := Validate(iu)
	for _, want := range []string{"spec.namespace: \"other\"", "spec.applicationRefs[[].namePattern", "spec.applicationRefs[ok].labelSelectors"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q", err, want)
		}
	}
	iu.Spec = iuv1.ImageUpdaterSpec{Namespace: "argocd", ApplicationRefs: []iuv1.ApplicationRef{{NamePattern: "*"}}}
	if err := Validate(iu); err != nil {
		t.Errorf("a valid ImageUpdater: %v", err)
	}
}

func TestUseAnnotations(t *testing.T) {
	iu := &iuv1.ImageUpdater{ObjectMeta: metav1.ObjectMeta{Name: "iu", Namespace: "argocd"}, Spec: iuv1.ImageUpdaterSpec{
		CommonUpdateSettings: &iuv1.CommonUpdateSettings{UpdateStrategy: ptr("alphabetical")}, // ignored: the annotations say
		ApplicationRefs: []iuv1.ApplicationRef{{NamePattern: "*", UseAnnotations: ptr(true),
			ImagesVerification: &iuv1.ImagesVerification{CosignKey: &iuv1.SecretRef{SecretName: "k", Key: "pub"}}}},
	}}
	app := application("legacy", nil)
	if conf, errs := ForApplication(iu, app); conf != nil || errs != nil {
		t.Errorf("an Application without image-list: %+v %v", conf, errs)
	}
	app.Annotations = map[string]string{Prefix + "image-list": "web=ghcr.io/org/web", Prefix + "web.update-strategy": "digest"}
	conf, errs := ForApplication(iu, app)
	if len(errs) != 0 || len(conf.Images) != 1 || conf.Images[0].Strategy != tags.Digest || conf.Images[0].Verify == nil {
		t.Errorf("%+v %v", conf, errs)
	}
}
