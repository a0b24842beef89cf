package config

import (
	"strings"
	"testing"
	"time"
)

// TestSeedRegistries reads the registries.conf of seeds 002 and 004 as
// written (YAML's yes/no included).
func TestSeedRegistries(t *testing.T) {
	regs, err := ParseRegistries(`registries:
- name: Google Container Registry Asia
  api_url: https://asia.gcr.io
  prefix: asia.gcr.io
  ping: no
  credentials: pullsecret:argocd/argocd-image-updater-docker-registry-secret
`)
	if err != nil || len(regs) != 1 || regs[0].Ping || regs[0].Credentials != "pullsecret:argocd/argocd-image-updater-docker-registry-secret" {
		t.Fatalf("with a pull secret: %+v %v", regs, err)
	}
	regs, err = ParseRegistries(`registries:  
  - name: foo-image
    api_url: https://123456789012.dkr.ecr.ap-northeast-1.amazonaws.com
    prefix: 123456789012.dkr.ecr.ap-northeast-1.amazonaws.com
    credentials: ext:/scripts/ecr-login.sh
    ping: yes
    credsexpire: 10h
`)
	if err != nil || len(regs) != 1 || !regs[0].Ping || regs[0].CredsExpire != 10*time.Hour {
		t.Fatalf("with an external credentials script: %+v %v", regs, err)
	}
}

func TestRegistriesAreChecked(t *testing.T) {
	for _, conf := range []string{
		"registries:\n- name: x\n  api_url: https://x\n",                                             // no prefix
		"registries:\n- name: x\n  prefix: x.io\n  credsexpire: soon\n",                              // bad duration
		"registries:\n- name: x\n  prefix: x.io\n  credentials: vault:x\n",                           // unknown source
		"registries:\n- name: x\n  prefix: x.io\n  default: true\n- prefix: y.io\n  default: true\n", // two defaults
		"registries:\n- name: x\n  prefix: x.io\n  colour: blue\n",                                   // unknown field
	} {
		if _, err := ParseRegistries(conf); err == nil || !strings.Contains(err.Error(), "registries.conf") {
			t.Errorf("%q: %v", conf, err)
		}
	}
}

func TestRegistryFor(t *testing.T) {
	regs := []Registry{{Name: "gcr", Prefix: "asia.gcr.io"}, {Name: "team", Prefix: "asia.gcr.io/team"}, {Name: "local", Prefix: "localhost:5000"}}
	for image, want := range map[string][2]string{
		"asia.gcr.io/other/app": {"gcr", "asia.gcr.io/other/app"},
		"asia.gcr.io/team/app":  {"team", "asia.gcr.io/team/app"},
		"localhost:5000/app":    {"local", "localhost:5000/app"},
		"nginx":                 {"Docker Hub", "docker.io/library/nginx"},
		"bitnami/redis":         {"Docker Hub", "docker.io/bitnami/redis"},
		"quay.io/coreos/etcd":   {"quay.io", "quay.io/coreos/etcd"},
	} {
		reg, full := RegistryFor(regs, image)
		if reg.Name != want[0] || full != want[1] {
			t.Errorf("%s: %s %s, want %v", image, reg.Name, full, want)
		}
	}
	reg, full := RegistryFor([]Registry{{Name: "mirror", Prefix: "mirror.local", Default: true}}, "nginx")
	if reg.Name != "mirror" || full != "mirror.local/nginx" {
		t.Errorf("a default registry: %s %s", reg.Name, full)
	}
}

func TestAPIAddress(t *testing.T) {
	mirror := Registry{Name: "mirror", Prefix: "ghcr.io", APIURL: "http://127.0.0.1:5000"}
	for _, c := range []struct {
		reg        Registry
		full, want string
	}{
		{mirror, "ghcr.io/org/app", "127.0.0.1:5000/org/app"},
		{Registry{Name: "same", Prefix: "quay.io", APIURL: "https://quay.io"}, "quay.io/org/app", "quay.io/org/app"},
		{Registry{Name: "path prefix", Prefix: "gcr.io/project", APIURL: "https://mirror.example"}, "gcr.io/project/app", "mirror.example/project/app"},
		{Registry{Name: "no api", Prefix: "example.com"}, "example.com/app", "example.com/app"},
		{dockerHub, "docker.io/library/nginx", "docker.io/library/nginx"},
	} {
		if got := APIAddress(c.reg, c.full); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.reg.Name, c.full, got, c.want)
		}
	}
}

func TestTagSortMode(t *testing.T) {
	regs, err := ParseRegistries("registries:\n- prefix: a.example\n  tagsortmode: latest-first\n- prefix: b.example\n  tagsortmode: none\n")
	if err != nil || !regs[0].TimeSorted() || regs[1].TimeSorted() {
		t.Errorf("%+v %v", regs, err)
	}
	if _, err := ParseRegistries("registries:\n- name: q\n  prefix: q.example\n  tagsortmode: newest\n"); err == nil || !strings.Contains(err.Error(), "registry q: tagsortmode") {
		t.Errorf("an unknown mode: %v", err)
	}
}
