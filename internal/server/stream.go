package server

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// streamKeepAlive is how often an idle stream sends a comment, so proxies
// keep the connection open.
const streamKeepAlive = 30 * time.Second

// applicationEvent is one message of the stream, in Argo CD's shape.
type applicationEvent struct {
	Type        watch.EventType       `json:"type"`
	Application *v1alpha1.Application `json:"application"`
}

// streamApplications answers GET /api/v1/stream/applications with
// Server-Sent Events: every Application the caller may get, filtered like
// the list (name, projects, selector), first as ADDED (unless a
// resourceVersion is given without a name) and then each change as it
// happens. Every stream of a namespace follows one informer; each has a
// queue of its own, so a slow client holds up no other.
func (s *Server) streamApplications(w http.ResponseWriter, r *http.Request, c *caller) {
	q := r.URL.Query()
	ns := q.Get("appNamespace")
	if ns == "" {
		ns = s.opts.Namespace
	}
	selector := labels.Everything()
	if sel := q.Get("selector"); sel != "" {
		parsed, err := labels.Parse(sel)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid selector %q: %v", sel, err))
			return
		}
		selector = parsed
	}
	name := q.Get("name")
	projects := append(q["projects"], q["project"]...)
	// As Argo CD's: the list comes first when no resourceVersion is given
	// or one Application is named, and nothing older than a given
	// resourceVersion is sent.
	rv := q.Get("resourceVersion")
	minVersion, _ := strconv.ParseUint(rv, 10, 64)
	keep := func(app *v1alpha1.Application) bool {
		v, err := strconv.ParseUint(app.ResourceVersion, 10, 64)
		return app.Namespace == ns && (name == "" || app.Name == name) &&
			(len(projects) == 0 || slices.Contains(projects, app.Spec.Project)) &&
			selector.Matches(labels.Set(app.Labels)) && (err != nil || v >= minVersion)
	}
	informer, release, err := s.appInformer(r.Context(), ns)
	if err != nil {
		s.internal(w, err)
		return
	}
	defer release()
	stream := s.startEventStream(w)
	if stream == nil {
		return
	}
	queue := newAppQueue()
	reg, err := informer.AddEventHandler(queue.handler(rv == "" || name != "", keep))
	if err != nil {
		s.opts.Log.Error("following applications for a stream", "namespace", ns, "error", err)
		return
	}
	defer func() { _ = informer.RemoveEventHandler(reg) }()
	tick := time.NewTicker(streamKeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if !stream.keepAlive() {
				return
			}
		case <-queue.ready:
			for ev, ok := queue.pop(); ok; ev, ok = queue.pop() {
				if c.can("applications", "get", s.appObject(ev.app)) && !s.sendApplicationEvent(stream, ev) {
					return
				}
			}
		}
	}
}

// sendApplicationEvent writes one event of the stream from the
// Application's kept encoding; false means the client is gone.
func (s *Server) sendApplicationEvent(stream *eventStream, ev appEvent) bool {
	data, err := s.encoded.encode(ev.app)
	if err != nil {
		return true // nothing sendable; the stream goes on
	}
	var msg bytes.Buffer
	msg.Grow(len(data) + 64)
	msg.WriteString(`data: {"result":{"type":"`)
	msg.WriteString(string(ev.typ))
	msg.WriteString(`","application":`)
	msg.Write(data)
	msg.WriteString("}}\n\n")
	return stream.write(msg.Bytes())
}
