package settings

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net"
	"path"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CertType is a repository certificate's kind: a TLS certificate
// (argocd-tls-certs-cm) or an SSH known host key (argocd-ssh-known-hosts-cm).
type CertType string

// The certificate kinds of Argo CD's API.
const (
	CertTypeHTTPS CertType = "https"
	CertTypeSSH   CertType = "ssh"
)

// Certificate is one trusted TLS certificate or SSH host key, in the
// shape of Argo CD's RepositoryCertificate.
type Certificate struct {
	// ServerName is the repository server's host name; for SSH it may
	// carry a port as [host]:port.
	ServerName string   `json:"serverName"`
	CertType   CertType `json:"certType"`
	// CertSubType is the SSH key type (ssh-rsa, ecdsa-sha2-nistp256, …) or
	// the TLS certificate's key algorithm.
	CertSubType string `json:"certSubType"`
	// CertData is the key (base64, as in known_hosts) or the PEM data;
	// lists leave it out.
	CertData []byte `json:"certData,omitempty"`
	// CertInfo is the SSH key's SHA256 fingerprint or the certificate's
	// subject.
	CertInfo string `json:"certInfo"`
}

// CertSelector picks certificates; empty fields match all.
type CertSelector struct {
	// HostNamePattern is a shell glob (* and ?) on the server name.
	HostNamePattern string
	// CertType is https (or tls), ssh, or "" / "*" for both.
	CertType string
	// CertSubType matches the SSH key type exactly, "" / "*" for all.
	CertSubType string
}

func (s CertSelector) matchType(t CertType) bool {
	switch s.CertType {
	case "", "*":
		return true
	case "tls":
		return t == CertTypeHTTPS
	}
	return s.CertType == string(t)
}

func (s CertSelector) matchHost(host string) bool {
	if s.HostNamePattern == "" {
		return true
	}
	// Brackets are literal, for SSH hosts written [host]:port.
	pattern := strings.NewReplacer("[", `\[`, "]", `\]`).Replace(s.HostNamePattern)
	ok, err := path.Match(pattern, host)
	return err == nil && ok
}

func (s CertSelector) matchSubType(sub string) bool {
	return s.CertSubType == "" || s.CertSubType == "*" || s.CertSubType == sub
}

// knownHost is one line of known_hosts: host, key type, base64 key.
type knownHost struct{ host, subType, data string }

func parseKnownHosts(text string) []knownHost {
	var out []knownHost
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 3 || strings.HasPrefix(f[0], "#") || strings.HasPrefix(f[0], "@") {
			continue
		}
		out = append(out, knownHost{host: f[0], subType: f[1], data: f[2]})
	}
	return out
}

func formatKnownHosts(hosts []knownHost) string {
	var b strings.Builder
	for _, h := range hosts {
		fmt.Fprintf(&b, "%s %s %s\n", h.host, h.subType, h.data)
	}
	return b.String()
}

// fingerprint is the SHA256 fingerprint of a known host's key, or "".
func (h knownHost) fingerprint() string {
	_, _, key, _, _, err := ssh.ParseKnownHosts([]byte(h.host + " " + h.subType + " " + h.data))
	if err != nil {
		return ""
	}
	return ssh.FingerprintSHA256(key)
}

// pemCertificates splits PEM data into its certificate blocks, failing on
// data that holds none or a block that is not a valid certificate.
func pemCertificates(data []byte) ([]*x509.Certificate, [][]byte, error) {
	var certs []*x509.Certificate
	var blocks [][]byte
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, nil, invalidCert("invalid certificate in PEM data: %v", err)
		}
		certs, blocks = append(certs, c), append(blocks, pem.EncodeToMemory(b))
	}
	if len(certs) == 0 {
		return nil, nil, invalidCert("no valid PEM data received")
	}
	return certs, blocks, nil
}

// Certificates lists the trusted certificates and host keys s picks,
// without their data, as Argo CD's certificate list shows them.
func Certificates(ctx context.Context, r client.Reader, namespace string, s CertSelector) ([]Certificate, error) {
	out := []Certificate{}
	if s.matchType(CertTypeSSH) {
		cm, err := ReadConfigMap(ctx, r, namespace, SSHKnownHostsConfigMap)
		if err != nil {
			return nil, err
		}
		for _, h := range parseKnownHosts(cm.Data[sshKnownHostsKey]) {
			if s.matchHost(h.host) && s.matchSubType(h.subType) {
				out = append(out, Certificate{ServerName: h.host, CertType: CertTypeSSH, CertSubType: h.subType, CertInfo: h.fingerprint()})
			}
		}
	}
	if s.matchType(CertTypeHTTPS) {
		cm, err := ReadConfigMap(ctx, r, namespace, TLSCertsConfigMap)
		if err != nil {
			return nil, err
		}
		for _, host := range sortedKeys(cm.Data) {
			if !s.matchHost(host) {
				continue
			}
			certs, _, err := pemCertificates([]byte(cm.Data[host]))
			if err != nil {
				out = append(out, Certificate{ServerName: host, CertType: CertTypeHTTPS, CertSubType: "invalid", CertInfo: err.Error()})
				continue
			}
			for _, c := range certs {
				out = append(out, Certificate{ServerName: host, CertType: CertTypeHTTPS,
					CertSubType: strings.ToLower(c.PublicKeyAlgorithm.String()), CertInfo: c.Subject.String()})
			}
		}
	}
	return out, nil
}

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// hostLabel is one DNS label; underscores are accepted as Argo CD does.
var hostLabel = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$`)

// ValidHostName reports whether h is a host name or IP address a
// certificate may be stored under.
func ValidHostName(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if !hostLabel.MatchString(label) {
			return false
		}
	}
	return true
}

// bracketedPort matches an SSH host with a port: [host]:port.
var bracketedPort = regexp.MustCompile(`^\[(.*)\]:\d+$`)

// checkCertificate validates a certificate to be added.
func checkCertificate(c Certificate) error {
	host := c.ServerName
	if m := bracketedPort.FindStringSubmatch(host); c.CertType == CertTypeSSH && m != nil {
		host = m[1]
	}
	if !ValidHostName(host) {
		return invalidCert("invalid hostname in request: %s", host)
	}
	switch c.CertType {
	case CertTypeSSH:
		if _, _, _, _, _, err := ssh.ParseKnownHosts([]byte(c.ServerName + " " + c.CertSubType + " " + string(c.CertData))); err != nil {
			return invalidCert("invalid SSH key for %s: %v", c.ServerName, err)
		}
	case CertTypeHTTPS:
		if _, _, err := pemCertificates(c.CertData); err != nil {
			return err
		}
	default:
		return invalidCert("unknown certificate type: %s", c.CertType)
	}
	return nil
}

// AddCertificates stores certificates in argocd-tls-certs-cm and
// argocd-ssh-known-hosts-cm, creating them when missing, and returns what
// was added or changed. An entry that exists with other data is an error
// unless upsert is set; one that exists with the same data is left alone.
func AddCertificates(ctx context.Context, c client.Client, namespace string, certs []Certificate, upsert bool) ([]Certificate, error) {
	for _, cert := range certs {
		if err := checkCertificate(cert); err != nil {
			return nil, err
		}
	}
	var created []Certificate
	err := updateConfigMap(ctx, c, namespace, SSHKnownHostsConfigMap, func(data map[string]string) error {
		hosts := parseKnownHosts(data[sshKnownHostsKey])
		added, err := addKnownHosts(&hosts, certs, upsert)
		if err != nil || len(added) == 0 {
			return err
		}
		created = append(created, added...)
		data[sshKnownHostsKey] = formatKnownHosts(hosts)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = updateConfigMap(ctx, c, namespace, TLSCertsConfigMap, func(data map[string]string) error {
		added, err := addTLSCertificates(data, certs, upsert)
		created = append(created, added...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return created, nil
}

func addKnownHosts(hosts *[]knownHost, certs []Certificate, upsert bool) ([]Certificate, error) {
	var added []Certificate
	for _, c := range certs {
		if c.CertType != CertTypeSSH {
			continue
		}
		h := knownHost{host: c.ServerName, subType: c.CertSubType, data: string(c.CertData)}
		i := slices.IndexFunc(*hosts, func(k knownHost) bool { return k.host == h.host && k.subType == h.subType })
		switch {
		case i < 0:
			*hosts = append(*hosts, h)
		case (*hosts)[i].data == h.data:
			continue
		case !upsert:
			return nil, refuse(ErrCertificateExists, "key for '%s' (subtype: '%s') already exists, and upsert was not specified", h.host, h.subType)
		default:
			(*hosts)[i] = h
		}
		c.CertInfo = h.fingerprint()
		added = append(added, c)
	}
	return added, nil
}

func addTLSCertificates(data map[string]string, certs []Certificate, upsert bool) ([]Certificate, error) {
	var added []Certificate
	for _, c := range certs {
		if c.CertType != CertTypeHTTPS {
			continue
		}
		old, exists := data[c.ServerName]
		if exists && old == string(c.CertData) {
			continue
		}
		if exists && !upsert {
			return nil, refuse(ErrCertificateExists, "TLS certificate for server '%s' already exists, and upsert was not specified", c.ServerName)
		}
		_, blocks, _ := pemCertificates(c.CertData)
		data[c.ServerName] = string(c.CertData)
		for _, b := range blocks {
			added = append(added, Certificate{ServerName: c.ServerName, CertType: CertTypeHTTPS, CertData: bytes.TrimSpace(b)})
		}
	}
	return added, nil
}

// RemoveCertificates deletes the certificates and host keys s picks and
// returns them.
func RemoveCertificates(ctx context.Context, c client.Client, namespace string, s CertSelector) ([]Certificate, error) {
	removed := []Certificate{}
	if s.matchType(CertTypeSSH) {
		err := updateConfigMap(ctx, c, namespace, SSHKnownHostsConfigMap, func(data map[string]string) error {
			var kept []knownHost
			for _, h := range parseKnownHosts(data[sshKnownHostsKey]) {
				if s.matchHost(h.host) && s.matchSubType(h.subType) {
					removed = append(removed, Certificate{ServerName: h.host, CertType: CertTypeSSH, CertSubType: h.subType, CertInfo: h.fingerprint()})
					continue
				}
				kept = append(kept, h)
			}
			data[sshKnownHostsKey] = formatKnownHosts(kept)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if s.matchType(CertTypeHTTPS) {
		err := updateConfigMap(ctx, c, namespace, TLSCertsConfigMap, func(data map[string]string) error {
			for _, host := range sortedKeys(data) {
				if s.matchHost(host) {
					removed = append(removed, Certificate{ServerName: host, CertType: CertTypeHTTPS})
					delete(data, host)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return removed, nil
}

// updateConfigMap changes a settings ConfigMap's data with change,
// creating the ConfigMap when it does not exist and retrying on conflicts.
// An error change returns is returned as it is.
// Nothing is written when change leaves the data as it was.
func updateConfigMap(ctx context.Context, c client.Client, namespace, name string, change func(data map[string]string) error) error {
	var refused error
	// A cached reader may not have seen a ConfigMap created a moment ago.
	conflict := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	err := retry.OnError(retry.DefaultRetry, conflict, func() error {
		cm := &corev1.ConfigMap{}
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm)
		missing := apierrors.IsNotFound(err)
		if err != nil && !missing {
			return err
		}
		data := map[string]string{}
		for k, v := range cm.Data {
			data[k] = v
		}
		if refused = change(data); refused != nil {
			return nil
		}
		if !missing && maps.Equal(data, cm.Data) {
			return nil
		}
		cm.Data = data
		if missing {
			cm.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: namespace,
				Labels: map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "argocd"}}
			return c.Create(ctx, cm)
		}
		return c.Update(ctx, cm)
	})
	if err != nil {
		return fmt.Errorf("updating ConfigMap/%s/%s: %w", namespace, name, err)
	}
	return refused
}

// Errors AddCertificates refuses a request with; errors.Is tells them
// apart, the message is Argo CD's.
var (
	ErrInvalidCertificate = errors.New("invalid certificate")
	ErrCertificateExists  = errors.New("certificate exists")
)

// refusal is a refused request of a kind errors.Is tells, with Argo CD's
// message.
type refusal struct {
	kind error
	msg  string
}

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return e.kind }

func refuse(kind error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

func invalidCert(format string, args ...any) error {
	return refuse(ErrInvalidCertificate, format, args...)
}
