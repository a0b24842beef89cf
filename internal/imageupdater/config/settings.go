package config

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/capstan-cd/capstan/internal/repo/git"
)

// The updater's ConfigMap: argocd-image-updater-config, as Argo CD Image
// Updater's manifests name it, or argocd-image-updater-cm, the name some
// installations use.
const (
	ConfigMapName       = "argocd-image-updater-config"
	LegacyConfigMapName = "argocd-image-updater-cm"
)

// Default commit author, as Argo CD Image Updater signs.
const (
	DefaultGitUser  = "argocd-image-updater"
	DefaultGitEmail = "noreply@argoproj.io"
)

// Settings are the updater's ConfigMap.
type Settings struct {
	Registries []Registry
	LogLevel   string
	// GitUser and GitEmail sign commits; CommitMessageTemplate is the
	// default commit message (an Application's git.commit-message wins).
	GitUser, GitEmail, CommitMessageTemplate string
	// CommitSigning, if set, signs Git write-back commits: with
	// git.commit-signing-key, an OpenPGP key ID or an SSH key's path, by
	// git.commit-signing-method (openpgp, the default, or ssh).
	// CommitSignOff (git.commit-sign-off) adds a Signed-off-by trailer.
	CommitSigning *git.Signing
	CommitSignOff bool
	// ApplicationsAPI is how argocd write-back reaches Applications:
	// "kubernetes" or "argocd" (Capstan's API at ServerAddr).
	ApplicationsAPI              string
	ServerAddr                   string
	GRPCWeb, Insecure, PlainText bool
	// KubeEvents creates Events on Applications for updates and errors.
	KubeEvents bool
	// PullSecretNamespaces are the namespaces beyond the updater's own
	// and the Application's destination namespace whose Secrets an
	// Application's pull-secret annotation may name (pullsecret: and
	// secret:), from the key pullsecret.namespaces: a comma-separated
	// list, "*" for any, as Argo CD Image Updater allows. Default none.
	PullSecretNamespaces []string
}

// PullSecretNamespacesKey is the ConfigMap key of PullSecretNamespaces.
const PullSecretNamespacesKey = "pullsecret.namespaces"

// ParseSettings reads the ConfigMap's data. Errors name the key.
func ParseSettings(data map[string]string) (Settings, error) {
	s := Settings{
		LogLevel: "info", GitUser: DefaultGitUser, GitEmail: DefaultGitEmail,
		ApplicationsAPI: "kubernetes", KubeEvents: true,
	}
	get := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := data[k]; ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	var err error
	if conf, ok := data["registries.conf"]; ok {
		if s.Registries, err = ParseRegistries(conf); err != nil {
			return s, err
		}
	}
	if v := get("log.level"); v != "" {
		switch strings.ToLower(v) {
		case "trace", "debug", "info", "warn", "error":
			s.LogLevel = strings.ToLower(v)
		default:
			return s, fmt.Errorf("log.level %q: want trace, debug, info, warn or error", v)
		}
	}
	if v := get("git.user"); v != "" {
		s.GitUser = v
	}
	if v := get("git.email"); v != "" {
		s.GitEmail = v
	}
	s.CommitMessageTemplate = data["git.commit-message-template"]
	if key := get("git.commit-signing-key"); key != "" {
		s.CommitSigning = &git.Signing{Method: git.SigningMethod(cmp.Or(get("git.commit-signing-method"), string(git.SignOpenPGP))), Key: key}
		if err := s.CommitSigning.Validate(); err != nil {
			return s, fmt.Errorf("git.commit-signing-key, git.commit-signing-method: %w", err)
		}
	}
	if v := get("applications_api"); v != "" {
		if v != "kubernetes" && v != "argocd" {
			return s, fmt.Errorf("applications_api %q: want kubernetes or argocd", v)
		}
		s.ApplicationsAPI = v
	}
	s.ServerAddr = get("argocd.server_addr", "argocd.serverAddr")
	for _, ns := range strings.Split(get(PullSecretNamespacesKey), ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			s.PullSecretNamespaces = append(s.PullSecretNamespaces, ns)
		}
	}
	for _, b := range []struct {
		keys []string
		dst  *bool
	}{
		{[]string{"argocd.grpc_web", "argocd.grpcWeb"}, &s.GRPCWeb},
		{[]string{"argocd.insecure"}, &s.Insecure},
		{[]string{"argocd.plaintext"}, &s.PlainText},
		{[]string{"kube.events"}, &s.KubeEvents},
		{[]string{"git.commit-sign-off"}, &s.CommitSignOff},
	} {
		if v := get(b.keys...); v != "" {
			if *b.dst, err = strconv.ParseBool(v); err != nil {
				return s, fmt.Errorf("%s %q: want true or false", b.keys[0], v)
			}
		}
	}
	return s, nil
}
