package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

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
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.cluster.KubeconfigPath)
	logFile := filepath.Join(os.TempDir(), "capstan-bench-run.log") // kept for a look after
	out, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGKILL); _ = cmd.Wait() }()

	apps, err := appCache(ctx, s, w.ns)
	if err != nil {
		return nil, err
	}
	kc, err := kubernetes.NewForConfig(s.own)
	if err != nil {
		return nil, err
	}
	fmt.Printf("apps=%d, capstan run %s (its log: %s)\n", o.n, strings.Join(o.args, " "), logFile)
	var last map[string]float64
	requests := func() int64 {
		now, err := apiRequests(ctx, kc)
		if err != nil {
			fmt.Fprintln(os.Stderr, "reading the API server's metrics:", err)
			return 0
		}
		if last != nil {
			printMetricDelta(last, now, o.n)
		}
		last = now
		return int64(now[""])
	}
	f, err := phases(ctx, s, w, apps, o.n, o.timeout, fmt.Printf, requests, func() float64 {
		sec, _ := cpuSeconds(cmd.Process.Pid)
		return sec
	})
	if err != nil {
		return nil, fmt.Errorf("%w (capstan's log: %s)", err, logFile)
	}
	f.peakRSSMiB = processRSS(cmd.Process.Pid) / 1024
	fmt.Printf("memory: peak RSS of capstan run %d MiB\n", f.peakRSSMiB)
	return f, nil
}

// apiRequests reads apiserver_request_total from the API server's metrics,
// summed by verb and resource, and over all under "". The bench's own
// requests are in it too: its creations and its watch.
func apiRequests(ctx context.Context, kc kubernetes.Interface) (map[string]float64, error) {
	data, err := kc.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(data)))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	fam := families["apiserver_request_total"]
	if fam == nil {
		return out, nil
	}
	for _, m := range fam.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["verb"] == "WATCH" || labels["verb"] == "CONNECT" {
			continue
		}
		key := labels["verb"] + " " + labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		if labels["dry_run"] != "" {
			key += " (dry run)"
		}
		v := m.GetCounter().GetValue()
		out[key] += v
		if labels["resource"] != "events" { // best-effort: see countingTransport
			out[""] += v
		}
	}
	return out, nil
}

// printMetricDelta prints the requests counted between two readings, most
// first.
func printMetricDelta(before, after map[string]float64, n int) {
	var keys []string
	for k := range after {
		if k != "" && after[k]-before[k] >= float64(n)/100 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return after[keys[i]]-before[keys[i]] > after[keys[j]]-before[keys[j]] })
	for _, k := range keys {
		d := after[k] - before[k]
		fmt.Printf("  %8.0f  %5.2f/app  %s\n", d, d/float64(n), k)
	}
}

// cpuSeconds is the user and system CPU time of process pid so far.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %v %v", pid, err1, err2)
	}
	const ticks = 100 // USER_HZ on Linux
	return (utime + stime) / ticks, nil
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
