package config

import (
	"strings"
	"testing"
)

func TestParseSettings(t *testing.T) {
	s, err := ParseSettings(nil)
	if err != nil || s.GitUser != DefaultGitUser || s.GitEmail != DefaultGitEmail || s.ApplicationsAPI != "kubernetes" || !s.KubeEvents || s.LogLevel != "info" {
		t.Errorf("defaults: %+v %v", s, err)
	}
	// An argocd-image-updater-cm with the API settings and a log level.
	s, err = ParseSettings(map[string]string{
		"argocd.grpcWeb":              "true",
		"log.level":                   "debug",
		"registries.conf":             "registries:\n- name: ecr\n  api_url: https://1.dkr.ecr.ap-northeast-1.amazonaws.com\n  prefix: 1.dkr.ecr.ap-northeast-1.amazonaws.com\n  credentials: ext:/scripts/ecr-login.sh\n  ping: yes\n  credsexpire: 10h\n",
		"git.user":                    "bot",
		"git.email":                   "bot@example.com",
		"git.commit-message-template": "update {{ .AppName }}",
		"applications_api":            "argocd",
		"argocd.server_addr":          "argocd-server:443",
		"argocd.plaintext":            "true",
		"kube.events":                 "false",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !s.GRPCWeb || s.LogLevel != "debug" || len(s.Registries) != 1 || s.Registries[0].CredsExpire.Hours() != 10 ||
		s.GitUser != "bot" || s.GitEmail != "bot@example.com" || s.CommitMessageTemplate != "update {{ .AppName }}" ||
		s.ApplicationsAPI != "argocd" || s.ServerAddr != "argocd-server:443" || !s.PlainText || s.KubeEvents {
		t.Errorf("parsed %+v", s)
	}
	for key, value := range map[string]string{"log.level": "loud", "applications_api": "grpc", "kube.events": "sometimes", "registries.conf": "registries: [{}]"} {
		if _, err := ParseSettings(map[string]string{key: value}); err == nil || !strings.Contains(err.Error(), strings.Split(key, ".")[0]) {
			t.Errorf("%s: %q: error %v should name the key", key, value, err)
		}
	}
}
