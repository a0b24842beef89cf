package cluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Config is the JSON in a cluster Secret's "config" key, as Argo CD writes it.
type Config struct {
	Username           string              `json:"username,omitempty"`
	Password           string              `json:"password,omitempty"`
	BearerToken        string              `json:"bearerToken,omitempty"`
	TLSClientConfig    TLSClientConfig     `json:"tlsClientConfig"`
	ExecProviderConfig *ExecProviderConfig `json:"execProviderConfig,omitempty"`
	AWSAuthConfig      *AWSAuthConfig      `json:"awsAuthConfig,omitempty"`
	DisableCompression bool                `json:"disableCompression,omitempty"`
	ProxyURL           string              `json:"proxyUrl,omitempty"`
}

// TLSClientConfig holds TLS options; the byte fields are base64 in JSON.
type TLSClientConfig struct {
	Insecure   bool   `json:"insecure"`
	ServerName string `json:"serverName,omitempty"`
	CertData   []byte `json:"certData,omitempty"`
	KeyData    []byte `json:"keyData,omitempty"`
	CAData     []byte `json:"caData,omitempty"`
}

// ExecProviderConfig runs a command for credentials, like a kubeconfig's exec.
type ExecProviderConfig struct {
	Command     string            `json:"command,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	APIVersion  string            `json:"apiVersion,omitempty"`
	InstallHint string            `json:"installHint,omitempty"`
}

// AWSAuthConfig reaches an EKS cluster with a token signed by the
// controller's AWS identity (after assuming RoleARN, with Profile's
// configuration), as capstan k8s-auth aws makes it.
type AWSAuthConfig struct {
	ClusterName string `json:"clusterName,omitempty"`
	RoleARN     string `json:"roleARN,omitempty"`
	Profile     string `json:"profile,omitempty"`
}

// execArgs are the arguments of capstan k8s-auth aws for the cluster; each
// value is joined to its flag, so none is read as a flag of its own.
func (a *AWSAuthConfig) execArgs() []string {
	args := []string{"k8s-auth", "aws", "--cluster-name=" + a.ClusterName}
	if a.RoleARN != "" {
		args = append(args, "--role-arn="+a.RoleARN)
	}
	if a.Profile != "" {
		args = append(args, "--profile="+a.Profile)
	}
	return args
}

// SelfCommand is the program an awsAuthConfig runs as its exec plugin,
// with k8s-auth aws: this process's executable (capstan), else
// argocd-k8s-auth from PATH, as in Argo CD's image.
var SelfCommand = sync.OnceValue(func() string {
	if path, err := os.Executable(); err == nil {
		return path
	}
	return "argocd-k8s-auth"
})

// fromSecret reads a cluster Secret. Errors name the Secret and the key.
func fromSecret(s *corev1.Secret) (*Cluster, error) {
	ref := "Secret/" + s.Namespace + "/" + s.Name
	str := func(k string) string { return strings.TrimSpace(string(s.Data[k])) }
	c := &Cluster{Name: str("name"), Server: strings.TrimSuffix(str("server"), "/"), Project: str("project"), SecretName: s.Name, ID: string(s.UID),
		RefreshRequested: s.Annotations[v1alpha1.AnnotationRefresh]}
	if c.Server == "" {
		return nil, fmt.Errorf("cluster %s: no server", ref)
	}
	for k, v := range s.Labels {
		if k != v1alpha1.LabelSecretType {
			if c.Labels == nil {
				c.Labels = map[string]string{}
			}
			c.Labels[k] = v
		}
	}
	if c.Name == "" {
		c.Name = c.Server
	}
	if ns := str("namespaces"); ns != "" {
		for _, n := range strings.Split(ns, ",") {
			if n = strings.TrimSpace(n); n != "" {
				c.Namespaces = append(c.Namespaces, n)
			}
		}
	}
	if v := str("clusterResources"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: clusterResources is %q, want true or false", ref, v)
		}
		c.ClusterResources = b
	}
	if v := str("shard"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("cluster %s: shard is %q, want a number", ref, v)
		}
		c.Shard = &n
	}
	var cfg Config
	if raw := s.Data["config"]; len(raw) > 0 {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, fmt.Errorf("cluster %s: config is not valid JSON: %w", ref, err)
		}
	}
	if cfg.ProxyURL != "" {
		u, err := url.Parse(cfg.ProxyURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5") || u.Host == "" {
			return nil, fmt.Errorf("cluster %s: proxyUrl %q is not an http, https or socks5 URL", ref, cfg.ProxyURL)
		}
	}
	c.Config = restConfig(c.Server, &cfg)
	return c, nil
}

// restConfig turns a cluster's server and Config into a client config.
func restConfig(server string, cfg *Config) *rest.Config {
	rc := &rest.Config{
		Host:        server,
		Username:    cfg.Username,
		Password:    cfg.Password,
		BearerToken: cfg.BearerToken,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure:   cfg.TLSClientConfig.Insecure,
			ServerName: cfg.TLSClientConfig.ServerName,
			CertData:   cfg.TLSClientConfig.CertData,
			KeyData:    cfg.TLSClientConfig.KeyData,
			CAData:     cfg.TLSClientConfig.CAData,
		},
		DisableCompression: cfg.DisableCompression,
	}
	if cfg.ProxyURL != "" {
		if u, err := url.Parse(cfg.ProxyURL); err == nil {
			rc.Proxy = http.ProxyURL(u)
		}
	}
	if a := cfg.AWSAuthConfig; a != nil && a.ClusterName != "" {
		command, args := SelfCommand(), a.execArgs()
		if filepath.Base(command) == "argocd-k8s-auth" {
			args = args[1:]
		}
		rc.ExecProvider = &clientcmdapi.ExecConfig{Command: command, Args: args, APIVersion: "client.authentication.k8s.io/v1beta1",
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
		return rc
	}
	if cfg.ExecProviderConfig != nil {
		e := cfg.ExecProviderConfig
		exec := &clientcmdapi.ExecConfig{
			Command:         e.Command,
			Args:            e.Args,
			APIVersion:      e.APIVersion,
			InstallHint:     e.InstallHint,
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}
		for k, v := range e.Env {
			exec.Env = append(exec.Env, clientcmdapi.ExecEnvVar{Name: k, Value: v})
		}
		rc.ExecProvider = exec
	}
	return rc
}
