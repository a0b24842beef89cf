package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/settings"
)

// logEntry is one line of a pod's log, in Argo CD's shape.
type logEntry struct {
	Content      string       `json:"content,omitempty"`
	TimeStamp    *metav1.Time `json:"timeStamp,omitempty"`
	TimeStampStr string       `json:"timeStampStr,omitempty"`
	PodName      string       `json:"podName,omitempty"`
	Last         bool         `json:"last,omitempty"`
}

// maxLogLine bounds one line of a log kept in memory.
const maxLogLine = 1 << 20

// podLogs answers GET /api/v1/applications/{name}/logs and
// /pods/{podName}/logs with Server-Sent Events: each line of the logs of
// the pods the query selects (a pod, a resource's pods, or all the app's),
// filtered, then an entry marked last. The caller needs logs/get on the
// app, as in Argo CD.
func (s *Server) podLogs(w http.ResponseWriter, r *http.Request, c *caller) error {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return err
	}
	if object := s.appObject(app); !c.can(rbac.ResourceLogs, rbac.ActionGet, object) {
		return c.forbidden(rbac.ResourceLogs, rbac.ActionGet, object)
	}
	q := r.URL.Query()
	ref := refFromQuery(r)
	if pod := r.PathValue("podName"); pod != "" {
		ref = appstate.ResourceRef{Kind: "Pod", Namespace: q.Get("namespace"), Name: pod}
	}
	pods, err := s.state.Pods(r.Context(), app, ref)
	if err != nil {
		return err
	}
	if err := s.allowLogsOf(r, len(pods)); err != nil {
		return err
	}
	opts, err := logOptions(q)
	if err != nil {
		return withStatus(http.StatusBadRequest, err)
	}
	stream := s.startEventStream(w)
	if stream == nil {
		return nil
	}
	send := func(e logEntry) bool { return stream.send(e) }
	keep := lineFilter(q.Get("filter"), q.Get("matchCase") == "true")
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var wg sync.WaitGroup
	for _, pod := range pods {
		relay := func() {
			s.relayLog(ctx, app, pod, opts, keep, send)
		}
		if !opts.Follow {
			relay() // one pod after the other
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); relay() }()
	}
	wg.Wait()
	send(logEntry{Last: true})
	return nil
}

// relayLog sends one pod's log, line by line.
func (s *Server) relayLog(ctx context.Context, app *v1alpha1.Application, pod appstate.ResourceRef, opts *corev1.PodLogOptions, keep func(string) bool, send func(logEntry) bool) {
	rc, err := s.state.Logs(ctx, app, pod, opts)
	if err != nil {
		send(logEntry{Content: err.Error(), PodName: pod.Name})
		return
	}
	defer func() { _ = rc.Close() }()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), maxLogLine)
	for sc.Scan() {
		stamp, content, _ := strings.Cut(sc.Text(), " ")
		if !keep(content) {
			continue
		}
		e := logEntry{Content: content, PodName: pod.Name, TimeStampStr: stamp}
		if t, err := time.Parse(time.RFC3339Nano, stamp); err == nil {
			e.TimeStamp = &metav1.Time{Time: t}
		}
		if !send(e) {
			return
		}
	}
}

// logOptions reads Argo CD's log query (container, follow, tailLines,
// sinceSeconds, previous).
func logOptions(q map[string][]string) (*corev1.PodLogOptions, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	opts := &corev1.PodLogOptions{Container: get("container"), Follow: get("follow") == "true", Previous: get("previous") == "true", Timestamps: true}
	for _, f := range []struct {
		key string
		set func(int64)
	}{
		{"tailLines", func(n int64) { opts.TailLines = &n }},
		{"sinceSeconds", func(n int64) { opts.SinceSeconds = &n }},
	} {
		if v := get(f.key); v != "" && v != "0" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s %q is not a count", f.key, v)
			}
			f.set(n)
		}
	}
	return opts, nil
}

// lineFilter keeps the lines containing filter (a leading ! keeps those
// without it), as Argo CD's log filter does.
func lineFilter(filter string, matchCase bool) func(string) bool {
	if filter == "" {
		return func(string) bool { return true }
	}
	negate := strings.HasPrefix(filter, "!")
	filter = strings.TrimPrefix(filter, "!")
	if !matchCase {
		filter = strings.ToLower(filter)
	}
	return func(line string) bool {
		if !matchCase {
			line = strings.ToLower(line)
		}
		return strings.Contains(line, filter) != negate
	}
}

// allowLogsOf refuses to stream the logs of more Pods than argocd-cm's
// server.maxPodLogsToRender allows, with Argo CD's message.
func (s *Server) allowLogsOf(r *http.Request, pods int) error {
	cm, err := settings.LoadArgoCD(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return err
	}
	most, err := cm.MaxPodLogsToRender()
	if err != nil {
		return err
	}
	if pods > most {
		return withStatus(http.StatusBadRequest, errors.New("max pods to view logs are reached. Please provide more granular query"))
	}
	return nil
}
