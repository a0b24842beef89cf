package repo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Isolation renders sources in worker processes: Helm templates, Jsonnet
// programs and Kustomize builds come from repositories, and one that loops
// to write gigabytes, or parses a huge file, must not take down the
// process that serves everything else. Workers are kept and reused, so a
// render costs a round trip over a pipe, not a process start; a worker
// that passes its memory limit or the render's deadline is killed, and
// its render fails with an error saying so.
type Isolation struct {
	// Command starts a worker: a program serving ServeWorker on its stdin
	// and stdout, such as {"/usr/local/bin/capstan", "repo-render-worker"}.
	// Required.
	Command []string
	// MaxMemory is a worker's memory limit (resident set size). Default
	// 1 GiB: several times what the largest public charts need.
	MaxMemory int64
	// Workers is how many renders run at once. Default: the number of CPUs.
	Workers int
}

// memoryPoll is how often a rendering worker's memory is checked.
const memoryPoll = 50 * time.Millisecond

// ErrRenderLimit means a render was stopped for using too much memory or
// producing too much output.
var ErrRenderLimit = errors.New("rendering stopped")

// errWorkerLost means a render worker went away for a reason of its own
// (not the source's): such a failure is not remembered for the source.
var errWorkerLost = errors.New("render worker")

// pool is the Service's render workers.
type pool struct {
	iso    Isolation
	tmp    string // each worker's temporary files live under here
	output int    // the largest result frame accepted, in bytes
	fetch  func(ctx context.Context, project, repoURL, name, version string) (string, error)

	slots chan struct{}
	mu    sync.Mutex
	idle  []*worker
	seq   int
}

func newPool(iso Isolation, tmp string, maxOutput int, fetch func(ctx context.Context, project, repoURL, name, version string) (string, error)) *pool {
	if iso.MaxMemory == 0 {
		iso.MaxMemory = 1 << 30
	}
	if iso.Workers == 0 {
		iso.Workers = runtime.NumCPU()
	}
	return &pool{iso: iso, tmp: tmp, output: maxOutput, fetch: fetch, slots: make(chan struct{}, iso.Workers)}
}

// render renders one source in a worker.
func (p *pool) render(ctx context.Context, in *sourceInput) ([]*unstructured.Unstructured, v1alpha1.ApplicationSourceType, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	defer func() { <-p.slots }()
	var out *renderOutcome
	for attempt := 0; ; attempt++ {
		w, err := p.take()
		if err != nil {
			return nil, "", err
		}
		var keep, sent bool
		out, keep, sent, err = w.render(ctx, jobOf(in), p)
		if keep {
			p.put(w)
		} else {
			w.stop()
		}
		if err != nil && !sent && attempt == 0 && ctx.Err() == nil {
			continue // an idle worker that died: the job never reached it
		}
		if err != nil {
			return nil, "", err
		}
		break
	}
	if out.Error != "" {
		return nil, out.Type, errors.New(out.Error)
	}
	return out.Objects, out.Type, nil
}

func (p *pool) take() (*worker, error) {
	p.mu.Lock()
	for n := len(p.idle); n > 0; n = len(p.idle) {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		select {
		case <-w.done: // it died while idle: a new one takes its place
			_ = os.RemoveAll(w.tmp)
			continue
		default:
		}
		p.mu.Unlock()
		return w, nil
	}
	p.seq++
	seq := p.seq
	p.mu.Unlock()
	return p.start(seq)
}

func (p *pool) put(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle = append(p.idle, w)
}

// worker is one render worker process.
type worker struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	tmp  string
	done chan struct{}
}

func (p *pool) start(seq int) (*worker, error) {
	tmp := filepath.Join(p.tmp, "worker-"+strconv.Itoa(seq))
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command(p.iso.Command[0], p.iso.Command[1:]...)
	// The Go runtime works to stay under three quarters of the limit
	// before the limit is enforced by killing the worker.
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "GOMEMLIMIT="+strconv.FormatInt(p.iso.MaxMemory/4*3, 10))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting a render worker: %w", err)
	}
	w := &worker{cmd: cmd, in: in, out: bufio.NewReader(out), tmp: tmp, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(w.done)
	}()
	return w, nil
}

// stop kills the worker and removes its temporary files.
func (w *worker) stop() {
	_ = w.cmd.Process.Kill()
	<-w.done
	_ = os.RemoveAll(w.tmp)
}

// render sends a job and reads its result, answering dependency fetches,
// while a watchdog enforces the memory limit and the deadline. keep says
// whether the worker can take another job; sent whether the job reached
// it.
func (w *worker) render(ctx context.Context, job *renderJob, p *pool) (out *renderOutcome, keep, sent bool, err error) {
	stopWatch := make(chan struct{})
	killed := make(chan string, 1)
	watched := make(chan bool, 1) // whether the watchdog killed the worker
	go func() { watched <- w.watch(ctx, p.iso.MaxMemory, stopWatch, killed) }()
	defer func() {
		// The watchdog is done before the worker is kept: one that saw
		// the context end as the render finished must not kill a worker
		// back in the pool.
		close(stopWatch)
		if <-watched {
			keep = false
		}
	}()
	explain := func(err error) error {
		select {
		case why := <-killed:
			return fmt.Errorf("%w: %s", ErrRenderLimit, why)
		default:
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", errWorkerLost, err)
	}
	if err := writeFrame(w.in, &frame{Job: job}); err != nil {
		return nil, false, false, explain(err)
	}
	for {
		f, size, err := readFrame(w.out, p.output+maxControlFrame)
		if errors.Is(err, errFrameTooLarge) {
			return nil, false, true, fmt.Errorf("%w: the rendered manifests are %d bytes, over the limit of %d", ErrRenderLimit, size, p.output)
		}
		if err != nil {
			return nil, false, true, explain(err)
		}
		switch {
		case f.Result != nil:
			return f.Result, true, true, nil
		case f.Fetch != nil:
			dir, err := p.fetch(ctx, job.Project, f.Fetch.RepoURL, f.Fetch.Name, f.Fetch.Version)
			reply := &fetchReply{Dir: dir}
			if err != nil {
				reply = &fetchReply{Error: err.Error()}
			}
			if err := writeFrame(w.in, &frame{Fetched: reply}); err != nil {
				return nil, false, true, explain(err)
			}
		default:
			return nil, false, true, fmt.Errorf("%w: unexpected frame", errWorkerLost)
		}
	}
}

// watch kills the worker when ctx ends or its resident memory passes max,
// saying why on killed, until stop is closed; it reports whether it
// killed the worker.
func (w *worker) watch(ctx context.Context, max int64, stop <-chan struct{}, killed chan<- string) bool {
	tick := time.NewTicker(memoryPoll)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return false
		case <-w.done:
			return false
		case <-ctx.Done():
			_ = w.cmd.Process.Kill()
			return true
		case <-tick.C:
		}
		if rss := residentBytes(w.cmd.Process.Pid); rss > max {
			killed <- fmt.Sprintf("it used more than %d MiB of memory", max>>20)
			_ = w.cmd.Process.Kill()
			return true
		}
	}
}

// residentBytes is a process's resident set size, from /proc (0 where
// there is none).
func residentBytes(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(fields[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
