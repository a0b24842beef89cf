package manifests_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/capstan-cd/capstan/internal/profiler"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
)

// A kubelet stand-in: it starts a pod's containers as processes on this
// machine, as the pod spec says, so that the install manifests' commands,
// arguments, environment, mounts and ServiceAccount permissions are what
// the programs really run with. What a host cannot give a process is
// emulated in the open:
//   - the pod's IP is a loopback address of its own (127.x.y.z), which
//     the programs are told to listen on (listenOnPod);
//   - /app/config mounts are written under ARGOCD_APP_CONFIG_PATH, the
//     variable Argo CD's (and Capstan's) components read that root from;
//   - the /tmp emptyDir is a fresh directory given as TMPDIR;
//   - any other emptyDir is a directory of the pod's, shared by its
//     containers, and a ConfigMap or Secret mounted elsewhere than
//     /app/config is written into a directory of the container's; a path
//     under such a mount in a command or argument is rewritten to that
//     directory, and so is the image's own program
//     (/usr/local/bin/capstan); the plugin sockets' directory is given as
//     ARGOCD_PLUGINSOCKFILEPATH and a plugin's config directory as
//     argocd-cmp-server's --config-dir-path, the ways Argo CD's programs
//     take those paths.
//
// The ServiceAccount's token comes from a TokenRequest. Run as root, each
// container gets a mount and host-name namespace of its own: the token,
// CA and namespace are at /var/run/secrets/kubernetes.io/serviceaccount
// with KUBERNETES_SERVICE_HOST and _PORT set, so the programs use their
// in-cluster configuration, and the host name is the pod's (a
// StatefulSet's ordinal is read from it). Otherwise the token reaches the
// process in a kubeconfig (KUBECONFIG).
type kubelet struct {
	config    *rest.Config
	cs        kubernetes.Interface
	namespace string
	// programs maps a container's command (or image, when it has no
	// command) to the executable that plays it.
	programs map[string]string
	// path is what the image puts on PATH ahead of the host's (Dex, which
	// Capstan's image carries).
	path []string
	// image maps paths of programs in the image to the executables that
	// play them.
	image map[string]string
}

// pod is one started pod.
type pod struct {
	name string
	ip   string
	spec corev1.PodSpec
	logs map[string]string // container name → log file
	// volumes are the pod's emptyDir volumes (but /tmp), by name.
	volumes map[string]string
}

// start runs spec's init containers to completion, then starts its
// containers, and returns once every readiness probe passes.
func (k *kubelet) start(t *testing.T, name, ip string, spec corev1.PodSpec) *pod {
	t.Helper()
	p := &pod{name: name, ip: ip, spec: spec, logs: map[string]string{}, volumes: map[string]string{}}
	sa := k.serviceAccount(t, spec.ServiceAccountName)
	for _, c := range spec.InitContainers {
		cmd := k.command(t, p, c, sa)
		if err := cmd.Run(); err != nil {
			t.Fatalf("pod %s: init container %s: %v\n%s", name, c.Name, err, readLog(p.logs[c.Name]))
		}
	}
	for _, c := range spec.Containers {
		cmd := k.command(t, p, c, sa)
		if err := cmd.Start(); err != nil {
			t.Fatalf("pod %s: container %s: %v", name, c.Name, err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		})
	}
	for _, c := range spec.Containers {
		k.waitReady(t, p, c)
	}
	return p
}

// command is the process the container c runs as.
func (k *kubelet) command(t *testing.T, p *pod, c corev1.Container, sa *serviceAccount) *exec.Cmd {
	t.Helper()
	env := k.env(t, p, c)
	work := t.TempDir()
	paths := k.mount(t, p, c, env, work)
	for image, bin := range k.image {
		paths[image] = bin
	}
	argv := append(append([]string{}, c.Command...), c.Args...)
	for i := range argv {
		argv[i] = paths.rewriteWords(expand(argv[i], env))
	}
	program := c.Image
	if len(c.Command) > 0 {
		program = c.Command[0]
		argv = argv[1:]
	}
	bin, ok := k.programs[program]
	if !ok {
		bin, ok = k.programs[strings.SplitN(program, ":", 2)[0]]
	}
	if rewritten := paths.rewrite(program); !ok && rewritten != program {
		bin, ok = rewritten, true // a program a volume holds
	}
	if !ok {
		t.Fatalf("pod %s: container %s runs %q, which this test does not know how to start", p.name, c.Name, program)
	}
	bin, err := exec.LookPath(bin)
	if err != nil {
		t.Fatalf("pod %s: container %s: %v", p.name, c.Name, err)
	}
	if filepath.Base(program) == "argocd-cmp-server" {
		argv = append(argv, "--config-dir-path="+paths.rewrite(pluginConfigDir))
	}
	env["HOME"] = work
	env["PATH"] = strings.Join(append(append([]string{}, k.path...), os.Getenv("PATH")), string(os.PathListSeparator))
	argv = listenOnPod(filepath.Base(bin), program, p.ip, env, argv)
	var cmd *exec.Cmd
	if inPodNamespaces() {
		host, port, err := net.SplitHostPort(strings.TrimPrefix(k.config.Host, "https://"))
		if err != nil {
			t.Fatal(err)
		}
		env["KUBERNETES_SERVICE_HOST"], env["KUBERNETES_SERVICE_PORT"] = host, port
		// The program is run by a link named as the container's command,
		// the name the capstan binary dispatches on.
		link := filepath.Join(t.TempDir(), filepath.Base(program))
		if err := os.Symlink(bin, link); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command("unshare", append([]string{"--mount", "--uts", "--propagation", "private", "--", "/bin/sh", "-c", podScript,
			"pod", p.name, sa.dir, link}, argv...)...)
	} else {
		env["KUBECONFIG"] = sa.kubeconfig
		cmd = exec.Command(bin, argv...)
		cmd.Args[0] = program // the capstan binary dispatches on the name it runs as
	}
	cmd.Dir = work
	for name, value := range env {
		cmd.Env = append(cmd.Env, name+"="+value)
	}
	logPath := filepath.Join(t.TempDir(), c.Name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	cmd.Stdout, cmd.Stderr = f, f
	p.logs[c.Name] = logPath
	return cmd
}

// env resolves c's environment as the kubelet does: in order, values
// expanding earlier variables, references to ConfigMaps, Secrets and the
// pod's own fields.
func (k *kubelet) env(t *testing.T, p *pod, c corev1.Container) map[string]string {
	t.Helper()
	ctx := context.Background()
	env := map[string]string{}
	for _, e := range c.Env {
		switch from := e.ValueFrom; {
		case from == nil:
			env[e.Name] = expand(e.Value, env)
		case from.FieldRef != nil:
			env[e.Name] = k.field(t, p, from.FieldRef.FieldPath)
		case from.ConfigMapKeyRef != nil:
			ref := from.ConfigMapKeyRef
			cm, err := k.cs.CoreV1().ConfigMaps(k.namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			value, found := "", err == nil
			if found {
				value, found = cm.Data[ref.Key]
			}
			if !found && (ref.Optional == nil || !*ref.Optional) {
				t.Fatalf("pod %s: %s: key %s of ConfigMap %s: %v", p.name, e.Name, ref.Key, ref.Name, err)
			}
			if found {
				env[e.Name] = value
			}
		case from.SecretKeyRef != nil:
			ref := from.SecretKeyRef
			s, err := k.cs.CoreV1().Secrets(k.namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			var value []byte
			found := err == nil
			if found {
				value, found = s.Data[ref.Key]
			}
			if !found && (ref.Optional == nil || !*ref.Optional) {
				t.Fatalf("pod %s: %s: key %s of Secret %s: %v", p.name, e.Name, ref.Key, ref.Name, err)
			}
			if found {
				env[e.Name] = string(value)
			}
		default:
			t.Fatalf("pod %s: %s: a kind of valueFrom this test does not resolve", p.name, e.Name)
		}
	}
	return env
}

func (k *kubelet) field(t *testing.T, p *pod, path string) string {
	switch path {
	case "metadata.namespace":
		return k.namespace
	case "metadata.name":
		return p.name
	case "status.podIP":
		return p.ip
	case "spec.serviceAccountName":
		return p.spec.ServiceAccountName
	}
	t.Fatalf("pod %s: field %s is not one this test resolves", p.name, path)
	return ""
}

// pluginConfigDir and pluginSocketDir are where Argo CD's plugin sidecars
// read their plugin.yaml and make their sockets.
const (
	pluginConfigDir = "/home/argocd/cmp-server/config"
	pluginSocketDir = "/home/argocd/cmp-server/plugins"
)

// mounts maps the container's mount paths to the directories that play
// them.
type mounts map[string]string

// rewrite returns path with its longest mounted prefix replaced.
func (m mounts) rewrite(path string) string {
	best := ""
	for prefix := range m {
		if (path == prefix || strings.HasPrefix(path, prefix+"/")) && len(prefix) > len(best) {
			best = prefix
		}
	}
	if best == "" {
		return path
	}
	return m[best] + strings.TrimPrefix(path, best)
}

// rewriteWords rewrites each space-separated word of s, such as the
// paths in a shell command.
func (m mounts) rewriteWords(s string) string {
	words := strings.Split(s, " ")
	for i, w := range words {
		words[i] = m.rewrite(w)
	}
	return strings.Join(words, " ")
}

// mount gives c its volumes (see kubelet) and returns where the ones
// mounted at paths of their own are.
func (k *kubelet) mount(t *testing.T, p *pod, c corev1.Container, env map[string]string, work string) mounts {
	t.Helper()
	const configRoot = "/app/config"
	volumes := map[string]corev1.Volume{}
	for _, v := range p.spec.Volumes {
		volumes[v.Name] = v
	}
	out := mounts{}
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			t.Fatalf("pod %s: container %s mounts %s, which the pod does not have", p.name, c.Name, m.Name)
		}
		switch {
		case m.MountPath == "/tmp" && v.EmptyDir != nil:
			env["TMPDIR"] = t.TempDir()
		case strings.HasPrefix(m.MountPath, configRoot+"/"):
			env["ARGOCD_APP_CONFIG_PATH"] = filepath.Join(work, "config")
			k.writeVolume(t, p, v, filepath.Join(work, "config", strings.TrimPrefix(m.MountPath, configRoot)))
		case v.EmptyDir != nil:
			dir, ok := p.volumes[m.Name]
			if !ok {
				dir = shortDir(t)
				p.volumes[m.Name] = dir
			}
			out[m.MountPath] = dir
			if m.MountPath == pluginSocketDir {
				env["ARGOCD_PLUGINSOCKFILEPATH"] = dir
			}
		case m.MountPath == filepath.Dir(profiler.DefaultPath) && v.ConfigMap != nil:
			dir := t.TempDir() // the profiler setting, read where the variable says
			k.writeVolume(t, p, v, dir)
			env[profiler.PathEnv] = filepath.Join(dir, filepath.Base(profiler.DefaultPath))
		case m.SubPath != "":
			dir := t.TempDir()
			k.writeVolume(t, p, v, dir)
			out[m.MountPath] = filepath.Join(dir, m.SubPath)
			out[filepath.Dir(m.MountPath)] = dir // the file's directory, for programs that take that
		default:
			t.Fatalf("pod %s: container %s mounts %s at %s, which this test does not emulate", p.name, c.Name, m.Name, m.MountPath)
		}
	}
	return out
}

// shortDir is a new directory with a short path, removed when the test
// ends: it may hold Unix sockets, whose paths may not pass 107 bytes.
func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "pod")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// writeVolume writes a Secret or ConfigMap volume's files into dir.
func (k *kubelet) writeVolume(t *testing.T, p *pod, v corev1.Volume, dir string) {
	t.Helper()
	ctx := context.Background()
	var data map[string][]byte
	var items []corev1.KeyToPath
	var optional *bool
	var err error
	switch {
	case v.Secret != nil:
		items, optional = v.Secret.Items, v.Secret.Optional
		var s *corev1.Secret
		if s, err = k.cs.CoreV1().Secrets(k.namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{}); err == nil {
			data = s.Data
		}
	case v.ConfigMap != nil:
		items, optional = v.ConfigMap.Items, v.ConfigMap.Optional
		var cm *corev1.ConfigMap
		if cm, err = k.cs.CoreV1().ConfigMaps(k.namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{}); err == nil {
			data = map[string][]byte{}
			for key, value := range cm.Data {
				data[key] = []byte(value)
			}
		}
	default:
		t.Fatalf("pod %s: volume %s is neither a Secret nor a ConfigMap", p.name, v.Name)
	}
	if err != nil && !(apierrors.IsNotFound(err) && optional != nil && *optional) {
		t.Fatalf("pod %s: volume %s: %v", p.name, v.Name, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if len(items) == 0 {
		for key := range data {
			items = append(items, corev1.KeyToPath{Key: key, Path: key})
		}
	}
	for _, item := range items {
		value, ok := data[item.Key]
		if !ok {
			continue // a missing key of an optional volume
		}
		if err := os.WriteFile(filepath.Join(dir, item.Path), value, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// podScript runs in a container's own mount and host-name namespaces: it
// names the host after the pod, puts the ServiceAccount's files where a
// pod has them (on a fresh /run: /var/run links to it), and runs the
// container's program. Arguments: pod name, ServiceAccount directory,
// then the command.
const podScript = `set -e
hostname "$1"
mount -t tmpfs tmpfs /run
mkdir -p /run/secrets/kubernetes.io/serviceaccount
cp "$2"/* /run/secrets/kubernetes.io/serviceaccount/
shift 2
exec "$@"`

// inPodNamespaces says whether containers run in namespaces of their own
// (see kubelet): it takes root, and a machine that lets this process make
// mount and host-name namespaces.
var inPodNamespaces = sync.OnceValue(func() bool {
	return os.Geteuid() == 0 && exec.Command("unshare", "--mount", "--uts", "--propagation", "private", "--", "true").Run() == nil
})

// serviceAccount is a ServiceAccount's credentials as a pod gets them.
type serviceAccount struct {
	// dir holds token, ca.crt and namespace, the files Kubernetes mounts.
	dir string
	// kubeconfig holds the same, for a process run without namespaces.
	kubeconfig string
}

// serviceAccount issues a token to the ServiceAccount sa of the namespace:
// the process has the permissions the manifests grant it, no more.
func (k *kubelet) serviceAccount(t *testing.T, sa string) *serviceAccount {
	t.Helper()
	if sa == "" {
		sa = "default"
	}
	expiry := int64(3600)
	tr, err := k.cs.CoreV1().ServiceAccounts(k.namespace).CreateToken(context.Background(), sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for ServiceAccount %s/%s: %v", k.namespace, sa, err)
	}
	out := &serviceAccount{dir: t.TempDir(), kubeconfig: filepath.Join(t.TempDir(), "kubeconfig")}
	for name, data := range map[string][]byte{"token": []byte(tr.Status.Token), "ca.crt": k.config.CAData, "namespace": []byte(k.namespace)} {
		if err := os.WriteFile(filepath.Join(out.dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["in-cluster"] = &clientcmdapi.Cluster{Server: k.config.Host, CertificateAuthorityData: k.config.CAData}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["in-cluster"] = &clientcmdapi.Context{Cluster: "in-cluster", AuthInfo: sa, Namespace: k.namespace}
	cfg.CurrentContext = "in-cluster"
	if err := clientcmd.WriteToFile(*cfg, out.kubeconfig); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitReady waits for c's readiness probe to pass at the pod's address.
func (k *kubelet) waitReady(t *testing.T, p *pod, c corev1.Container) {
	t.Helper()
	probe := c.ReadinessProbe
	if probe == nil {
		return
	}
	port := func(v intstr.IntOrString) string {
		if v.Type == intstr.Int {
			return strconv.Itoa(v.IntValue())
		}
		for _, cp := range c.Ports {
			if cp.Name == v.StrVal {
				return strconv.Itoa(int(cp.ContainerPort))
			}
		}
		t.Fatalf("pod %s: container %s has no port %s", p.name, c.Name, v.StrVal)
		return ""
	}
	httpc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	ready := false
	defer func() {
		if !ready {
			t.Logf("pod %s: container %s's log:\n%s", p.name, c.Name, readLog(p.logs[c.Name]))
		}
	}()
	eventually.Within(t, eventually.Options{Timeout: 2 * time.Minute, Interval: 200 * time.Millisecond}, "pod "+p.name+": container "+c.Name+" ready", func() string {
		switch {
		case probe.TCPSocket != nil:
			conn, err := net.DialTimeout("tcp", net.JoinHostPort(p.ip, port(probe.TCPSocket.Port)), time.Second)
			if err != nil {
				return err.Error()
			}
			_ = conn.Close()
		case probe.HTTPGet != nil:
			scheme := strings.ToLower(string(probe.HTTPGet.Scheme))
			if scheme == "" {
				scheme = "http"
			}
			url := scheme + "://" + net.JoinHostPort(p.ip, port(probe.HTTPGet.Port)) + probe.HTTPGet.Path
			resp, err := httpc.Get(url)
			if err != nil {
				return err.Error()
			}
			_ = resp.Body.Close()
			if resp.StatusCode < 200 || resp.StatusCode >= 400 {
				return fmt.Sprintf("GET %s: %s", url, resp.Status)
			}
		default:
			t.Fatalf("pod %s: container %s: a probe this test does not run", p.name, c.Name)
		}
		return ""
	})
	ready = true
}

// expand replaces $(NAME) with NAME's value in env, as Kubernetes expands
// a container's command, arguments and variable values: $$ is a literal
// $, and a reference to an unknown variable stays as written.
func expand(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) {
			if s[i+1] == '$' {
				b.WriteByte('$')
				i++
				continue
			}
			if s[i+1] == '(' {
				if end := strings.IndexByte(s[i+2:], ')'); end >= 0 {
					if v, ok := env[s[i+2:i+2+end]]; ok {
						b.WriteString(v)
						i += end + 2
						continue
					}
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// listenOnPod makes a program listen on its pod's address: in a pod,
// every address the program listens on is the pod's own; on this host it
// must be told. Capstan's server and repo server take Argo CD's listen
// variables (set per pod here, as argocd-cmd-params-cm's single value
// would not do for replicas), the others a flag. The container's
// environment and arguments are otherwise as the manifest says.
func listenOnPod(bin, program, ip string, env map[string]string, argv []string) []string {
	switch {
	case program == "argocd-server":
		env["ARGOCD_SERVER_LISTEN_ADDRESS"], env["ARGOCD_SERVER_METRICS_LISTEN_ADDRESS"] = ip, ip
	case program == "argocd-repo-server":
		env["ARGOCD_REPO_SERVER_LISTEN_ADDRESS"], env["ARGOCD_REPO_SERVER_LISTEN_METRICS_ADDRESS"] = ip, ip
	case program == "argocd-application-controller":
		argv = append(argv, "--metrics-address="+ip)
	case program == "argocd-dex":
		argv = append(argv, "--address="+ip)
	case program == "argocd-applicationset-controller":
		argv = append(argv, "--metrics-addr="+ip+":8080", "--probe-addr="+ip+":8081")
	case program == "argocd-image-updater":
		argv = append(argv, "--listen-address="+ip)
	case bin == "redis-server":
		argv = append(argv, "--bind", ip)
	}
	return argv
}

// readLog returns the last lines of a container's log, for a failure.
func readLog(path string) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}
