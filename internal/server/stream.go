package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// streamKeepAlive is how often an idle stream sends a comment, so proxies
// keep the connection open.
const streamKeepAlive = 30 * time.Second

// streamApplications answers GET /api/v1/stream/applications with
// Server-Sent Events: every Application the caller may get, filtered like
// the list (name, projects, selector), first as ADDED (unless a
// resourceVersion is given without a name) and then each change as it
// happens. Every stream of a namespace follows one informer; each has a
// queue of its own, so a slow client holds up no other.
func (s *Server) streamApplications(w http.ResponseWriter, r *http.Request, c *caller) error {
	q := r.URL.Query()
	ns := q.Get("appNamespace")
	if ns == "" {
		ns = s.opts.Namespace
	}
	if !s.namespaceEnabled(ns) {
		return withStatus(http.StatusForbidden, errors.New("permission denied: "+namespaceNotPermitted(ns)))
	}
	selector := labels.Everything()
	if sel := q.Get("selector"); sel != "" {
		parsed, err := labels.Parse(sel)
		if err != nil {
			return badRequest(fmt.Sprintf("invalid selector %q: %v", sel, err))
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
		return err
	}
	defer release()
	// Following before the answer starts: a client that sees the stream
	// open misses no change made after.
	queue := newAppQueue()
	reg, err := informer.AddEventHandler(queue.handler(rv == "" || name != "", keep))
	if err != nil {
		return fmt.Errorf("following the Applications of namespace %s: %w", ns, err)
	}
	defer func() { _ = informer.RemoveEventHandler(reg) }()
	stream := s.startEventStream(w)
	if stream == nil {
		return nil
	}
	sender := &appSender{s: s, stream: stream, fields: parseFields(q), sent: map[string]uint64{}}
	tick := time.NewTicker(streamKeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-tick.C:
			if !stream.keepAlive() {
				return nil
			}
		case <-queue.ready:
			for ev, ok := queue.pop(); ok; ev, ok = queue.pop() {
				if c.can(rbac.ResourceApplications, rbac.ActionGet, s.appObject(ev.app)) && !sender.send(ev) {
					return nil
				}
			}
		}
	}
}

// appSender writes one stream's Application events, each from a kept
// encoding of the Application and with the selected fields only, and, as
// Argo CD's, never the same message for an Application twice in a row.
type appSender struct {
	s      *Server
	stream *eventStream
	fields fieldSelection
	sent   map[string]uint64 // hash of the last message by Application
}

// send writes one event; false means the client is gone.
func (a *appSender) send(ev appEvent) bool {
	msg, err := a.message(ev)
	if err != nil {
		return true // nothing sendable; the stream goes on
	}
	key := ev.app.Namespace + "/" + ev.app.Name
	h := fnv.New64a()
	_, _ = h.Write(msg)
	if sum := h.Sum64(); ev.typ == watch.Deleted {
		delete(a.sent, key)
	} else if a.sent[key] == sum {
		return true
	} else {
		a.sent[key] = sum
	}
	return a.stream.write(msg)
}

// message is the event's whole Server-Sent Events message.
func (a *appSender) message(ev appEvent) ([]byte, error) {
	var body []byte
	if a.fields.all() {
		data, err := a.s.encoded.encode(ev.app)
		if err != nil {
			return nil, err
		}
		body = appEventJSON(ev.typ, data)
	} else {
		var err error
		body, err = a.s.encoded.encodeView(ev.app, "stream:"+string(ev.typ)+":"+a.fields.key, func() ([]byte, error) {
			data, err := a.s.encoded.encode(ev.app)
			if err != nil {
				return nil, err
			}
			var doc any
			if err := json.Unmarshal(appEventJSON(ev.typ, data), &doc); err != nil {
				return nil, err
			}
			a.fields.filterJSON("", doc)
			return json.Marshal(doc)
		})
		if err != nil {
			return nil, err
		}
	}
	msg := make([]byte, 0, len(body)+8)
	msg = append(msg, "data: "...)
	msg = append(msg, body...)
	return append(msg, "\n\n"...), nil
}

// appEventJSON is the JSON of one stream result from the Application's
// encoding: {"result":{"type":...,"application":...}}.
func appEventJSON(t watch.EventType, app []byte) []byte {
	out := make([]byte, 0, len(app)+64)
	out = append(out, `{"result":{"type":"`...)
	out = append(out, t...)
	out = append(out, `","application":`...)
	out = append(out, app...)
	return append(out, "}}"...)
}
