package config_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	iuv1 "github.com/capstan-cd/capstan/api/imageupdater/v1alpha1"
	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
)

// Annotations as Argo CD Image Updater documents them.
func ExampleParse() {
	app, errs := config.Parse(map[string]string{
		config.Prefix + "image-list":           "web=ghcr.io/org/web:1.x",
		config.Prefix + "web.update-strategy":  "semver",
		config.Prefix + "write-back-method":    "git",
		config.Prefix + "write-back-target":    "kustomization",
		config.Prefix + "web.ignore-tags":      "1.9.9",
		config.Prefix + "web.helm.image-name":  "unused for kustomize",
		config.Prefix + "git-branch":           "main",
		config.Prefix + "kustomize.image-name": "web",
	})
	img := app.Images[0]
	fmt.Println(img.Alias, img.Name, img.Constraint, img.Strategy, app.WriteBack.Method, app.WriteBack.Target, len(errs))
	// Output: web ghcr.io/org/web 1.x semver git kustomization 0
}

// An ImageUpdater gives an Application the settings of its most specific
// reference, merged spec → reference → image.
func ExampleForApplication() {
	semver, newest := "semver", "newest-build"
	iu := &iuv1.ImageUpdater{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "argocd"}, Spec: iuv1.ImageUpdaterSpec{
		CommonUpdateSettings: &iuv1.CommonUpdateSettings{UpdateStrategy: &semver},
		ApplicationRefs: []iuv1.ApplicationRef{
			{NamePattern: "shop-*", Images: []iuv1.ImageConfig{{Alias: "web", ImageName: "ghcr.io/org/web:2.x"}}},
			{NamePattern: "shop-canary", CommonUpdateSettings: &iuv1.CommonUpdateSettings{UpdateStrategy: &newest},
				Images: []iuv1.ImageConfig{{Alias: "web", ImageName: "ghcr.io/org/web"}}},
		},
	}}
	for _, name := range []string{"shop-eu", "shop-canary", "blog"} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd"}}
		conf, _ := config.ForApplication(iu, app)
		if conf == nil {
			fmt.Println(name, "not selected")
			continue
		}
		fmt.Println(name, conf.Images[0].Name, conf.Images[0].Strategy)
	}
	// Output:
	// shop-eu ghcr.io/org/web semver
	// shop-canary ghcr.io/org/web newest-build
	// blog not selected
}
