package config

import "testing"

// FuzzAnnotations reads an Application's image-updater annotations, which
// whoever may edit the Application writes.
func FuzzAnnotations(f *testing.F) {
	f.Add("nginx=nginx:~1.25, app=registry.local:5000/team/app", "semver", "regexp:^v[0-9]+", "git:secret:argocd/creds", "helmvalues:/values.yaml", "main:image-updater-{{.SHA256}}")
	f.Add("", "digest", "any", "argocd", "kustomization", "")
	f.Add("a=b=c:d:e", "???", "regexp:(", "git:repocreds", "kustomization:../x", "::")
	f.Fuzz(func(t *testing.T, list, strategy, allow, method, target, branch string) {
		_, _ = Parse(map[string]string{
			"argocd-image-updater.argoproj.io/image-list":            list,
			"argocd-image-updater.argoproj.io/update-strategy":       strategy,
			"argocd-image-updater.argoproj.io/allow-tags":            allow,
			"argocd-image-updater.argoproj.io/write-back-method":     method,
			"argocd-image-updater.argoproj.io/write-back-target":     target,
			"argocd-image-updater.argoproj.io/git-branch":            branch,
			"argocd-image-updater.argoproj.io/nginx.update-strategy": strategy,
			"argocd-image-updater.argoproj.io/nginx.ignore-tags":     allow,
			"argocd-image-updater.argoproj.io/nginx.platforms":       target,
			"argocd-image-updater.argoproj.io/nginx.pull-secret":     method,
		})
	})
}

// FuzzRegistriesConf reads argocd-image-updater-config's registries.conf.
func FuzzRegistriesConf(f *testing.F) {
	f.Add("registries:\n- name: Docker Hub\n  api_url: https://registry-1.docker.io\n  prefix: docker.io\n  credentials: secret:argocd/dockerhub#creds\n  limit: 20\n  default: true\n")
	f.Add("registries: [{prefix: x, credsexpire: 10h, tagsortmode: latest-first}]")
	f.Add("registries: {")
	f.Add("a: &a [*a]")
	f.Fuzz(func(t *testing.T, text string) {
		regs, err := ParseRegistries(text)
		if err != nil {
			return
		}
		_, _ = RegistryFor(regs, "docker.io/library/nginx")
		_ = Insecure(regs, "registry.local")
		_ = Limit(regs, "registry.local")
		_, _ = ParseSettings(map[string]string{"registries.conf": text, "log.level": text, "git.commit-message-template": text})
	})
}
