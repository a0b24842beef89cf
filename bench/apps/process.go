package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// processRun is one measurement of `capstan run` as a user starts it (all
// its components, its defaults), as a process of its own: its time to
// all Synced, CPU seconds and peak memory, and the API server's count of
// the requests made meanwhile.
type processRun struct {
	n       int
	timeout time.Duration
	args    []string // more flags for capstan run
	env     []string // more of its environment, KEY=VALUE
}

func (o processRun) measure(ctx context.Context) (*figures, error) {
	dir, err := os.MkdirTemp("", "capstan-bench-bin-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "capstan")
	build := exec.Command("go", "build", "-o", bin, "./cmd/capstan")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building capstan: %v: %s", err, out)
	}
	s, w, err := newStandardSite(ctx, o.n)
	if err != nil {
		return nil, err
	}
	defer s.close()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"run", "--namespace", w.ns, "--root", filepath.Join(s.dir, "root"),
		"--server-port", strconv.Itoa(port), "--server-insecure", "--metrics-port", "0", "--image-updater-metrics-port", "0",
		"--leader-elect=false", "--repo-poll-interval", repoPoll.String()}, o.args...)
	run, err := startProgram("capstan-run", bin, args, append([]string{"KUBECONFIG=" + s.cluster.KubeconfigPath}, o.env...))
	if err != nil {
		return nil, err
	}
	measured := programs{run}
	defer measured.stop()
	fmt.Printf("apps=%d, capstan run %s (its log: %s)\n", o.n, strings.Join(o.args, " "), run.log)
	return measurePrograms(ctx, s, w, o.n, o.timeout, measured, func(ctx context.Context) (int64, error) {
		return 0, pushWebhook(ctx, port, s.repoURL)
	})
}

// pushWebhook announces a push to every branch of repoURL to capstan run's
// API server as GitHub's webhook does (no secret is configured, as in Argo
// CD's defaults): its handler hands the repository to the controller.
func pushWebhook(ctx context.Context, port int, repoURL string) error {
	body, err := json.Marshal(map[string]any{"ref": "refs/heads/main",
		"repository": map[string]string{"html_url": repoURL, "clone_url": repoURL, "default_branch": "main"}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/api/webhook", port), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("the webhook answered %s: %s", resp.Status, msg)
	}
	return nil
}

// measurePrograms measures the two phases of programs already started:
// the API server's count of requests, their CPU seconds and peak memory.
func measurePrograms(ctx context.Context, s *site, w workload, n int, timeout time.Duration, measured programs,
	announce func(context.Context) (int64, error)) (*figures, error) {
	apps, err := appCache(ctx, s, w.ns)
	if err != nil {
		return nil, err
	}
	requests, err := apiRequestCounter(ctx, s, n)
	if err != nil {
		return nil, err
	}
	f, err := phases{site: s, workload: w, apps: apps, n: n, timeout: timeout, printf: fmt.Printf,
		requests: requests, cpu: measured.cpuSeconds, announce: announce}.run(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w (logs: %s)", err, measured.logs())
	}
	own, children := measured.peakRSSParts()
	f.peakRSSMiB = own + children
	fmt.Printf("memory: peak RSS %d MiB: the programs' own %d MiB, their children's %d MiB (%s)\n", f.peakRSSMiB, own, children, measured.logs())
	for _, p := range measured {
		pid := p.cmd.Process.Pid
		fmt.Printf("  %s at the end: anonymous memory %d MiB, its program's pages %d MiB\n",
			p.name, processStatus(pid, "RssAnon")/1024, processStatus(pid, "RssFile")/1024)
	}
	return f, nil
}

// apiRequestCounter returns a function that reads the API server's count
// of requests but Events so far and prints those made since its last call
// by verb and resource, with the API server's mean latency for each.
func apiRequestCounter(ctx context.Context, s *site, n int) (func() int64, error) {
	kc, err := kubernetes.NewForConfig(s.own)
	if err != nil {
		return nil, err
	}
	var last *apiStats
	return func() int64 {
		now, err := readAPIStats(ctx, kc)
		if err != nil {
			fmt.Fprintln(os.Stderr, "reading the API server's metrics:", err)
			return 0
		}
		if last != nil {
			printMetricDelta(last, now, n)
		}
		last = now
		return int64(now.requests[""])
	}, nil
}

// apiStats is what the API server's metrics say of the requests so far,
// by verb and resource ("PATCH applications", "APPLY configmaps (dry
// run)"), and over all but Events under "". The bench's own requests are
// in them too: its creations and its watch.
type apiStats struct {
	requests map[string]float64 // apiserver_request_total
	// seconds and timed are apiserver_request_duration_seconds' sum and
	// count: the time the API server took to answer.
	seconds, timed map[string]float64
}

// readAPIStats reads the API server's metrics.
func readAPIStats(ctx context.Context, kc kubernetes.Interface) (*apiStats, error) {
	data, err := kc.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(data)))
	if err != nil {
		return nil, err
	}
	out := &apiStats{requests: map[string]float64{}, seconds: map[string]float64{}, timed: map[string]float64{}}
	if fam := families["apiserver_request_total"]; fam != nil {
		for _, m := range fam.Metric {
			key, ok := requestKey(m)
			if !ok {
				continue
			}
			v := m.GetCounter().GetValue()
			out.requests[key] += v
			if !isEvent(key) { // best-effort: see countingTransport
				out.requests[""] += v
			}
		}
	}
	if fam := families["apiserver_request_duration_seconds"]; fam != nil {
		for _, m := range fam.Metric {
			if key, ok := requestKey(m); ok {
				out.seconds[key] += m.GetHistogram().GetSampleSum()
				out.timed[key] += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out, nil
}

// requestKey names a metric's requests by verb and resource, as the
// bench's own counts do; watches and connections are left out.
func requestKey(m *dto.Metric) (string, bool) {
	labels := map[string]string{}
	for _, l := range m.Label {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["verb"] == "WATCH" || labels["verb"] == "CONNECT" {
		return "", false
	}
	key := labels["verb"] + " " + labels["resource"]
	if labels["subresource"] != "" {
		key += "/" + labels["subresource"]
	}
	if labels["dry_run"] != "" {
		key += " (dry run)"
	}
	return key, true
}

// printMetricDelta prints the requests counted between two readings, most
// first, each with the API server's mean time to answer it.
func printMetricDelta(before, after *apiStats, n int) {
	var keys []string
	for k := range after.requests {
		if k != "" && after.requests[k]-before.requests[k] >= float64(n)/100 {
			keys = append(keys, k)
		}
	}
	delta := func(k string) float64 { return after.requests[k] - before.requests[k] }
	sort.Slice(keys, func(i, j int) bool { return delta(keys[i]) > delta(keys[j]) })
	for _, k := range keys {
		d := delta(k)
		latency := ""
		if timed := after.timed[k] - before.timed[k]; timed > 0 {
			latency = fmt.Sprintf("  (the API server: %.1f ms each)", 1000*(after.seconds[k]-before.seconds[k])/timed)
		}
		fmt.Printf("  %8.0f  %5.2f/app  %s%s\n", d, d/float64(n), k, latency)
	}
}

// processStatus is one field of process pid's status, in KiB.
func processStatus(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	return statusField(bufio.NewScanner(f), field)
}

// processRSS is process pid's VmHWM, in KiB.
func processRSS(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	return vmHWM(bufio.NewScanner(f))
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
