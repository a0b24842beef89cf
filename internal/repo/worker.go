package repo

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/render/directory"
)

// The render worker protocol: frames of a big-endian uint32 length and a
// JSON frame, over the worker's stdin (from the Service) and stdout (to
// it). The Service sends a job; the worker answers with a result, asking
// for Helm chart dependencies (fetch, answered by fetched) on the way.
type frame struct {
	Job     *renderJob     `json:"job,omitempty"`
	Fetch   *fetchRequest  `json:"fetch,omitempty"`
	Fetched *fetchReply    `json:"fetched,omitempty"`
	Result  *renderOutcome `json:"result,omitempty"`
}

// renderJob is one source to render, as sourceInput holds it.
type renderJob struct {
	Root        string                     `json:"root"`
	Source      v1alpha1.ApplicationSource `json:"source"`
	Revision    string                     `json:"revision"`
	Refs        map[string]string          `json:"refs,omitempty"`
	AppName     string                     `json:"appName"`
	Namespace   string                     `json:"namespace"`
	Project     string                     `json:"project,omitempty"`
	KubeVersion string                     `json:"kubeVersion,omitempty"`
	APIVersions []string                   `json:"apiVersions,omitempty"`
	// KustomizeBuildOptions are argocd-cm's kustomize.buildOptions.
	KustomizeBuildOptions string                      `json:"kustomizeBuildOptions,omitempty"`
	KustomizeVersions     []v1alpha1.KustomizeVersion `json:"kustomizeVersions,omitempty"`
	// HelmValuesFileSchemes are argocd-cm's helm.valuesFileSchemes.
	HelmValuesFileSchemes []string `json:"helmValuesFileSchemes"`
	// Walk is the Service's Options.Directories.
	Walk directory.Walk `json:"walk"`
	// DisabledTools are the tools argocd-cm turns off.
	DisabledTools []string `json:"disabledTools,omitempty"`
}

type fetchRequest struct {
	RepoURL string `json:"repoURL"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

type fetchReply struct {
	Dir   string `json:"dir,omitempty"`
	Error string `json:"error,omitempty"`
}

type renderOutcome struct {
	Objects []*unstructured.Unstructured   `json:"objects,omitempty"`
	Type    v1alpha1.ApplicationSourceType `json:"type,omitempty"`
	Error   string                         `json:"error,omitempty"`
}

// maxControlFrame bounds every frame but a result: jobs, fetches and
// their answers are small.
const maxControlFrame = 1 << 20

func jobOf(in *sourceInput) *renderJob {
	return &renderJob{Root: in.root, Source: in.source, Revision: in.revision, Refs: in.refs,
		AppName: in.req.AppName, Namespace: in.req.Namespace, Project: in.req.Project, KubeVersion: in.req.KubeVersion, APIVersions: in.req.APIVersions,
		KustomizeBuildOptions: in.req.KustomizeBuildOptions, KustomizeVersions: in.req.KustomizeVersions, HelmValuesFileSchemes: in.req.HelmValuesFileSchemes, Walk: in.walk,
		DisabledTools: in.req.DisabledTools}
}

func (j *renderJob) input(deps pipeFetcher) *sourceInput {
	return &sourceInput{root: j.Root, source: j.Source, revision: j.Revision, refs: j.Refs, deps: deps, walk: j.Walk,
		req: &Request{AppName: j.AppName, Namespace: j.Namespace, Project: j.Project, KubeVersion: j.KubeVersion, APIVersions: j.APIVersions,
			KustomizeBuildOptions: j.KustomizeBuildOptions, KustomizeVersions: j.KustomizeVersions, HelmValuesFileSchemes: j.HelmValuesFileSchemes,
			DisabledTools: j.DisabledTools}}
}

func writeFrame(w io.Writer, f *frame) error {
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	var n [4]byte
	if len(data) > 1<<32-1 {
		return fmt.Errorf("frame of %d bytes is too large", len(data))
	}
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// errFrameTooLarge is a frame over the reader's limit; the frame is not read.
var errFrameTooLarge = errors.New("frame over the limit")

// readFrame reads one frame of at most max bytes.
func readFrame(r io.Reader, max int) (*frame, int, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, 0, err
	}
	size := int(binary.BigEndian.Uint32(n[:]))
	if size > max {
		return nil, size, errFrameTooLarge
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, size, err
	}
	f := &frame{}
	if err := json.Unmarshal(data, f); err != nil {
		return nil, size, err
	}
	return f, size, nil
}

// ServeWorker is a render worker: it renders the jobs read from in, one
// at a time, and writes their results to out, until in ends. It is what
// `capstan repo-render-worker` runs for a Service with Isolation.
func ServeWorker(ctx context.Context, in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	w := bufio.NewWriter(out)
	for {
		f, _, err := readFrame(r, maxControlFrame)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading a render job: %w", err)
		}
		if f.Job == nil {
			return errors.New("expected a render job")
		}
		objs, typ, err := renderSource(ctx, f.Job.input(pipeFetcher{r: r, w: w}))
		res := &renderOutcome{Objects: objs, Type: typ}
		if err != nil {
			res = &renderOutcome{Type: typ, Error: err.Error()}
		}
		if err := writeFrame(w, &frame{Result: res}); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

// pipeFetcher fetches Helm chart dependencies through the Service that
// sent the job: it holds the repositories' credentials.
type pipeFetcher struct {
	r io.Reader
	w *bufio.Writer
}

func (p pipeFetcher) FetchDependency(_ context.Context, repoURL, name, version string) (string, error) {
	if err := writeFrame(p.w, &frame{Fetch: &fetchRequest{RepoURL: repoURL, Name: name, Version: version}}); err != nil {
		return "", err
	}
	if err := p.w.Flush(); err != nil {
		return "", err
	}
	f, _, err := readFrame(p.r, maxControlFrame)
	if err != nil {
		return "", fmt.Errorf("waiting for dependency %s %s: %w", name, version, err)
	}
	if f.Fetched == nil {
		return "", errors.New("expected a fetched dependency")
	}
	if f.Fetched.Error != "" {
		return "", errors.New(f.Fetched.Error)
	}
	return f.Fetched.Dir, nil
}
