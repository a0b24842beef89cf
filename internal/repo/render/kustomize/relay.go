package kustomize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/capstan-cd/capstan/internal/repo/render/helm"
)

// Kustomize inflates a kustomization's helmCharts by running a helm
// program: `helm version`, `helm pull` for a chart not in the checkout,
// `helm template`. Capstan runs no outside helm. For a build with
// --enable-helm it starts a relay: a private directory holding a Unix
// socket and a link named helm to the running program, which Kustomize is
// told is its helm. Run so, the program sends its command line over the
// socket (see RunHelmRelay) and prints the answer; the build's own process
// serves the command in-process with Helm's SDK: charts are fetched
// through the build's dependency fetcher (with the repositories'
// credentials and cache), never written into the checkout, and every file
// a template reads stays in the checkout or the fetched chart.

// HelmRelayName is the name under which the program is run as Kustomize's
// helm.
const HelmRelayName = "helm"

// relaySocket is the socket's name in the relay's directory; names are
// short, as a socket's whole path must fit in 107 bytes.
const relaySocket = "s"

// maxRelayRequest bounds a relayed command line.
const maxRelayRequest = 1 << 20

// relayRequest is one helm command line.
type relayRequest struct {
	Args []string `json:"args"`
}

// relayReply is what the command prints and its exit code.
type relayReply struct {
	Stdout []byte `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	Code   int    `json:"code"`
}

// helmRelay serves one build's helm commands.
type helmRelay struct {
	dir      string
	ln       net.Listener
	root     string
	fetch    helm.DependencyFetcher
	mounts   *mounts
	tempRoot string // where Kustomize writes its value files
	done     sync.WaitGroup
}

// startHelmRelay starts the relay for a build of the checkout at root;
// program is the executable to link as helm.
func startHelmRelay(ctx context.Context, program, root string, fetch helm.DependencyFetcher, m *mounts) (*helmRelay, error) {
	dir, err := os.MkdirTemp("", "kh-")
	if err != nil {
		return nil, err
	}
	if socket := filepath.Join(dir, relaySocket); len(socket) > 107 {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("the temporary directory's path is too long for a Unix socket: %s", socket)
	}
	if err := os.Symlink(program, filepath.Join(dir, HelmRelayName)); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	ln, err := net.Listen("unix", filepath.Join(dir, relaySocket))
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	r := &helmRelay{dir: dir, ln: ln, root: root, fetch: fetch, mounts: m, tempRoot: filepath.Clean(os.TempDir())}
	r.done.Add(1)
	go r.serve(ctx)
	return r, nil
}

// command is the path Kustomize runs as helm.
func (r *helmRelay) command() string { return filepath.Join(r.dir, HelmRelayName) }

// close stops serving and removes the relay's directory.
func (r *helmRelay) close() {
	_ = r.ln.Close()
	r.done.Wait()
	_ = os.RemoveAll(r.dir)
}

func (r *helmRelay) serve(ctx context.Context) {
	defer r.done.Done()
	for {
		conn, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.answer(ctx, conn)
	}
}

// answer serves one command; Kustomize runs them one at a time.
func (r *helmRelay) answer(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	var req relayRequest
	if err := json.NewDecoder(io.LimitReader(conn, maxRelayRequest)).Decode(&req); err != nil {
		_ = json.NewEncoder(conn).Encode(relayReply{Stderr: "Error: reading the command: " + err.Error(), Code: 1})
		return
	}
	out, err := r.run(ctx, req.Args)
	reply := relayReply{Stdout: out}
	if err != nil {
		reply = relayReply{Stderr: "Error: " + err.Error(), Code: 1}
	}
	_ = json.NewEncoder(conn).Encode(reply)
}

// run serves the helm commands Kustomize's chart inflation writes.
func (r *helmRelay) run(ctx context.Context, args []string) ([]byte, error) {
	if len(args) == 0 {
		return nil, errors.New("no command")
	}
	cmd, err := parseHelmArgs(args)
	if err != nil {
		return nil, err
	}
	switch cmd.verb {
	case "version":
		return []byte(helm.Version() + "\n"), nil
	case "pull":
		return nil, r.pull(ctx, cmd)
	default:
		return r.template(ctx, cmd)
	}
}

// pull fetches the chart and mounts it where Kustomize expects it
// unpacked: <untardir>/<name>.
func (r *helmRelay) pull(ctx context.Context, cmd *helmCommand) error {
	repoURL, name := cmd.flags["--repo"], cmd.positional[0]
	if strings.HasPrefix(name, "oci://") {
		repoURL, name = name[:strings.LastIndex(name, "/")], name[strings.LastIndex(name, "/")+1:]
	}
	if repoURL == "" {
		return fmt.Errorf("chart %q: no repository to pull it from", name)
	}
	if r.fetch == nil {
		return fmt.Errorf("chart %q: fetching charts is not available here", name)
	}
	version := cmd.flags["--version"]
	if version == "" && cmd.switches["--devel"] {
		version = ">0.0.0-0"
	}
	dir, err := r.fetch.FetchDependency(ctx, repoURL, name, version)
	if err != nil {
		return err
	}
	r.mounts.add(filepath.Join(cmd.flags["--untardir"], name), dir)
	return nil
}

// template renders the chart in-process.
func (r *helmRelay) template(ctx context.Context, cmd *helmCommand) ([]byte, error) {
	in := helm.TemplateInput{
		Root: r.root, ReleaseName: cmd.positional[0], Namespace: cmd.flags["--namespace"],
		KubeVersion: cmd.flags["--kube-version"], APIVersions: cmd.lists["--api-versions"],
		IncludeCRDs: cmd.switches["--include-crds"], SkipTests: cmd.switches["--skip-tests"], NoHooks: cmd.switches["--no-hooks"],
		Dependencies: r.fetch,
	}
	if cmd.switches["--generate-name"] {
		in.ReleaseName = ""
	}
	chart := cmd.positional[len(cmd.positional)-1]
	if fetched, ok := r.mounts.resolve(chart); ok {
		in.Root, in.ChartDir = filepath.Dir(fetched), fetched
	} else if dir, err := r.inCheckout(chart); err == nil {
		in.ChartDir = dir
	} else {
		return nil, err
	}
	for _, f := range cmd.lists["-f"] {
		path, err := r.valueFile(f)
		if err != nil {
			return nil, err
		}
		in.ValueFiles = append(in.ValueFiles, path)
	}
	return helm.Template(ctx, in)
}

// inCheckout returns path with its links resolved if it is in the checkout.
func (r *helmRelay) inCheckout(path string) (string, error) {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, errors.Unwrap(err))
	}
	if !strings.HasPrefix(resolved, r.root+string(filepath.Separator)) && resolved != r.root {
		return "", fmt.Errorf("%s is outside the repository", path)
	}
	return resolved, nil
}

// valueFile allows the checkout's files and the copies Kustomize writes of
// them, in its own temporary directory, for the chart's values.
func (r *helmRelay) valueFile(path string) (string, error) {
	if fetched, ok := r.mounts.resolve(path); ok {
		return fetched, nil
	}
	if dir := filepath.Dir(filepath.Clean(path)); filepath.Dir(dir) == r.tempRoot && strings.HasPrefix(filepath.Base(dir), "kustomize-helm-") {
		if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
			return path, nil
		}
	}
	return r.inCheckout(path)
}

// mounts are the fetched charts of a build: where Kustomize expects each
// unpacked in the checkout, and where it is.
type mounts struct {
	mu  sync.Mutex
	dir map[string]string
}

func (m *mounts) add(at, dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dir == nil {
		m.dir = map[string]string{}
	}
	m.dir[filepath.Clean(at)] = dir
}

// resolve maps a path at or below a mounted chart to the fetched copy.
func (m *mounts) resolve(path string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	path = filepath.Clean(path)
	for at, dir := range m.dir {
		if path == at {
			return dir, true
		}
		if rest, ok := strings.CutPrefix(path, at+string(filepath.Separator)); ok {
			return filepath.Join(dir, rest), true
		}
	}
	return "", false
}
