package config

import (
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/repo/git"
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

// TestCommitSigningSettings reads Image Updater's git.commit-signing-key,
// git.commit-signing-method and git.commit-sign-off.
func TestCommitSigningSettings(t *testing.T) {
	s, err := ParseSettings(map[string]string{"git.commit-signing-key": "3AA5C34371567BD2", "git.commit-sign-off": "true"})
	if err != nil || s.CommitSigning == nil || s.CommitSigning.Method != git.SignOpenPGP || s.CommitSigning.Key != "3AA5C34371567BD2" || !s.CommitSignOff {
		t.Errorf("an OpenPGP key by default: %+v %v", s.CommitSigning, err)
	}
	s, err = ParseSettings(map[string]string{"git.commit-signing-key": "/app/config/ssh/signing", "git.commit-signing-method": "ssh"})
	if err != nil || s.CommitSigning == nil || s.CommitSigning.Method != git.SignSSH || s.CommitSignOff {
		t.Errorf("an SSH key: %+v %v", s.CommitSigning, err)
	}
	if s, err := ParseSettings(map[string]string{"git.commit-signing-method": "ssh"}); err != nil || s.CommitSigning != nil {
		t.Errorf("a method without a key signs nothing: %+v %v", s.CommitSigning, err)
	}
	for _, data := range []map[string]string{
		{"git.commit-signing-key": "not-a-key-id"},
		{"git.commit-signing-key": "key", "git.commit-signing-method": "ssh"},
		{"git.commit-signing-key": "3AA5C34371567BD2", "git.commit-signing-method": "x509"},
		{"git.commit-sign-off": "maybe"},
	} {
		if _, err := ParseSettings(data); err == nil || !strings.Contains(err.Error(), "git.commit-sign") {
			t.Errorf("%v: %v, want an error naming the key", data, err)
		}
	}
}
