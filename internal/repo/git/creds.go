package git

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
)

// Creds are the Git credentials and TLS options of one repository, as a
// repository or repo-creds Secret gives them.
type Creds struct {
	// Username and Password authenticate over HTTPS (a token goes in Password).
	Username string
	Password string
	// SSHPrivateKey authenticates over SSH.
	SSHPrivateKey string
	// KnownHosts are SSH known_hosts lines; empty with an SSH URL means the
	// host key is not checked only when Insecure is set.
	KnownHosts string
	// Insecure skips TLS verification (HTTPS) or host key checking (SSH).
	Insecure bool
	// CAData are PEM certificates trusted for the server's TLS certificate.
	CAData []byte
	// TLSClientCert and TLSClientKey are a PEM certificate and key
	// presented to an HTTPS server that asks for one.
	TLSClientCert, TLSClientKey string
	// BearerToken authenticates over HTTPS instead of Username and
	// Password (Bitbucket Data Center's access tokens).
	BearerToken string
	// Proxy is the HTTP(S) proxy URL to reach the repository through, and
	// NoProxy the hosts reached directly (comma-separated, as NO_PROXY).
	Proxy, NoProxy string
	// PlainHTTP reaches an OCI registry over HTTP, without TLS (a
	// repository Secret's insecureOCIForceHttp). Git ignores it.
	PlainHTTP bool
	// Depth, above 0, fetches commits with only that much history (a
	// repository Secret's depth). Default 0: the whole history.
	Depth int
	// LFS puts the content of Git LFS files in checkouts in place of their
	// pointers (a repository Secret's enableLfs). Default false.
	LFS bool
	// Identity names credentials whose secret is renewed (a GitHub App's
	// installation token, a cloud's access token): the Store keeps their
	// clone by it in place of the password or bearer token, so a new token
	// does not mean a new clone.
	Identity string
}

// identity is a digest of every field of c, empty for no credentials and
// options at all: the Store keeps one clone per URL and identity.
func (c Creds) identity() string {
	if reflect.ValueOf(c).IsZero() {
		return ""
	}
	h := sha256.New()
	password, bearer := c.Password, c.BearerToken
	if c.Identity != "" {
		password, bearer = "identity:"+c.Identity, ""
	}
	fields := []string{c.Username, password, c.SSHPrivateKey, c.KnownHosts, strconv.FormatBool(c.Insecure), string(c.CAData),
		c.TLSClientCert, c.TLSClientKey, bearer, c.Proxy, c.NoProxy}
	if c.Depth > 0 {
		fields = append(fields, "depth="+strconv.Itoa(c.Depth)) // a shallow clone is never a full one's
	}
	if c.LFS {
		fields = append(fields, "lfs") // nor are checkouts with LFS content
	}
	for _, field := range fields {
		fmt.Fprintf(h, "%d:%s;", len(field), field)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// objectChecks make git check every object it fetches: a tree with
// duplicate names, a ".git" entry or a path climbing out is refused before
// it is stored. Malformed author lines, which old histories hold and
// which harm nothing, stay accepted.
// noLFSFilter turns off the Git LFS filter a system's git configuration
// may set up (Debian's git-lfs package does), so that checkouts hold LFS
// pointers as git stores them unless enableLfs asks for the content, which
// smudgeLFS then fetches itself.
var noLFSFilter = [][2]string{
	{"filter.lfs.process", ""},
	{"filter.lfs.smudge", ""},
	{"filter.lfs.required", "false"},
}

// builtinConfig keeps git's automatic housekeeping in the foreground, so
// a gc or maintenance run that a fetch starts is over before the next
// command takes the repository, as Argo CD's built-in git configuration
// (reposerver.enable.builtin.git.config) does.
var builtinConfig = [][2]string{
	{"maintenance.autoDetach", "false"},
	{"gc.autoDetach", "false"},
}

var objectChecks = [][2]string{
	{"fetch.fsckObjects", "true"},
	{"fetch.fsck.hasDot", "error"},
	{"fetch.fsck.hasDotdot", "error"},
	{"fetch.fsck.hasDotgit", "error"},
	{"fetch.fsck.fullPathname", "error"},
	{"fetch.fsck.emptyName", "error"},
	{"fetch.fsck.badDate", "ignore"},
	{"fetch.fsck.badDateOverflow", "ignore"},
	{"fetch.fsck.badEmail", "ignore"},
	{"fetch.fsck.badName", "ignore"},
	{"fetch.fsck.badTimezone", "ignore"},
	{"fetch.fsck.missingEmail", "ignore"},
	{"fetch.fsck.missingNameBeforeEmail", "ignore"},
	{"fetch.fsck.missingSpaceBeforeDate", "ignore"},
	{"fetch.fsck.missingSpaceBeforeEmail", "ignore"},
	{"fetch.fsck.zeroPaddedDate", "ignore"},
	{"fetch.fsck.multipleAuthors", "ignore"},
}

// env returns the environment that gives git these credentials without
// putting secrets in command-line arguments, writing key files into dir,
// and the configuration every command gets (builtinConfig too unless
// noBuiltin).
func (c Creds) env(dir string, noBuiltin bool) ([]string, error) {
	config := slices.Concat(objectChecks, noLFSFilter)
	if !noBuiltin {
		config = append(config, builtinConfig...)
	}
	var env []string
	switch {
	case c.BearerToken != "":
		config = append(config, [2]string{"http.extraHeader", "Authorization: Bearer " + c.BearerToken})
	case c.Username != "" || c.Password != "":
		auth := base64.StdEncoding.EncodeToString([]byte(c.Username + ":" + c.Password))
		config = append(config, [2]string{"http.extraHeader", "Authorization: Basic " + auth})
	}
	if c.TLSClientCert != "" && c.TLSClientKey != "" {
		certPath, keyPath := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
		if err := os.WriteFile(certPath, []byte(c.TLSClientCert), 0o600); err != nil {
			return nil, err
		}
		if err := os.WriteFile(keyPath, []byte(c.TLSClientKey), 0o600); err != nil {
			return nil, err
		}
		config = append(config, [2]string{"http.sslCert", certPath}, [2]string{"http.sslKey", keyPath})
		env = append(env, "GIT_SSL_CERT="+certPath, "GIT_SSL_KEY="+keyPath)
	}
	if c.Proxy != "" {
		config = append(config, [2]string{"http.proxy", c.Proxy})
	}
	if c.NoProxy != "" {
		env = append(env, "NO_PROXY="+c.NoProxy, "no_proxy="+c.NoProxy)
	}
	if c.Insecure {
		config = append(config, [2]string{"http.sslVerify", "false"})
	}
	if len(c.CAData) > 0 {
		path := filepath.Join(dir, "ca.pem")
		if err := os.WriteFile(path, c.CAData, 0o600); err != nil {
			return nil, err
		}
		config = append(config, [2]string{"http.sslCAInfo", path})
	}
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(config)))
	// The environment's GIT_SSL_* variables win over configuration, so the
	// repository's TLS options are set there too.
	if c.Insecure {
		env = append(env, "GIT_SSL_NO_VERIFY=true")
	}
	if len(c.CAData) > 0 {
		env = append(env, "GIT_SSL_CAINFO="+filepath.Join(dir, "ca.pem"))
	}
	for i, kv := range config {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}

	if c.SSHPrivateKey != "" {
		keyPath := filepath.Join(dir, "id")
		key := c.SSHPrivateKey
		if key[len(key)-1] != '\n' {
			key += "\n"
		}
		if err := os.WriteFile(keyPath, []byte(key), 0o600); err != nil {
			return nil, err
		}
		ssh := "ssh -i " + keyPath + " -o IdentitiesOnly=yes -o BatchMode=yes"
		if c.Insecure {
			ssh += " -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
		} else {
			khPath := filepath.Join(dir, "known_hosts")
			if err := os.WriteFile(khPath, []byte(c.KnownHosts), 0o600); err != nil {
				return nil, err
			}
			ssh += " -o StrictHostKeyChecking=yes -o UserKnownHostsFile=" + khPath
		}
		env = append(env, "GIT_SSH_COMMAND="+ssh)
	}
	return env, nil
}

// TLSConfig is the TLS client configuration of the credentials, for
// clients other than git (chart repositories, OCI registries): the
// repository's insecure setting, and its CA certificates when it has
// some.
func (c Creds) TLSConfig() (*tls.Config, error) {
	conf := &tls.Config{InsecureSkipVerify: c.Insecure} //nolint:gosec // the repository's own insecure setting
	if len(c.CAData) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(c.CAData) {
			return nil, errors.New("the repository's CA data holds no PEM certificate")
		}
		conf.RootCAs = pool
	}
	return conf, nil
}
