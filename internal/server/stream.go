package server

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
// happens.
func (s *Server) streamApplications(w http.ResponseWriter, r *http.Request, c *caller) {
	q := r.URL.Query()
	ns := q.Get("appNamespace")
	if ns == "" {
		ns = s.opts.Namespace
	}
	opts := []client.ListOption{client.InNamespace(ns)}
	if sel := q.Get("selector"); sel != "" {
		parsed, err := labels.Parse(sel)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid selector %q: %v", sel, err))
			return
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: parsed})
	}
	if name := q.Get("name"); name != "" {
		// One Application: the API server lists and watches it alone.
		opts = append(opts, client.MatchingFields{"metadata.name": name})
	}
	projects := append(q["projects"], q["project"]...)
	wanted := func(app *v1alpha1.Application) bool {
		return (q.Get("name") == "" || app.Name == q.Get("name")) &&
			(len(projects) == 0 || slices.Contains(projects, app.Spec.Project)) &&
			c.can("applications", "get", s.appObject(app))
	}
	stream := s.startEventStream(w)
	if stream == nil {
		return
	}
	send := func(t watch.EventType, app *v1alpha1.Application) bool {
		return stream.send(applicationEvent{Type: t, Application: app})
	}

	// As Argo CD's: the list comes first when no resourceVersion is given
	// or one Application is named, and nothing older than a given
	// resourceVersion is sent.
	rv := q.Get("resourceVersion")
	minVersion, _ := strconv.ParseUint(rv, 10, 64)
	recent := func(app *v1alpha1.Application) bool {
		v, err := strconv.ParseUint(app.ResourceVersion, 10, 64)
		return err != nil || v >= minVersion
	}
	first := rv == "" || q.Get("name") != ""
	for r.Context().Err() == nil {
		if rv == "" || first {
			first = false
			var list v1alpha1.ApplicationList
			if err := s.watcher.List(r.Context(), &list, opts...); err != nil {
				s.opts.Log.Error("listing applications for a stream", "error", err)
				return
			}
			for i := range list.Items {
				if wanted(&list.Items[i]) && recent(&list.Items[i]) && !send(watch.Added, &list.Items[i]) {
					return
				}
			}
			rv = list.ResourceVersion
		}
		var done bool
		if rv, done = s.follow(r, stream, append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}}), rv, wanted, send); done {
			return
		}
	}
}

// follow relays one watch until it ends and returns the resource version
// to resume from ("" to list afresh, after the watch expired), and
// whether the client is gone.
func (s *Server) follow(r *http.Request, stream *eventStream, opts []client.ListOption, rv string,
	wanted func(*v1alpha1.Application) bool, send func(watch.EventType, *v1alpha1.Application) bool) (string, bool) {
	wi, err := s.watcher.Watch(r.Context(), &v1alpha1.ApplicationList{}, opts...)
	if err != nil {
		s.opts.Log.Warn("watching applications for a stream", "error", err)
		select {
		case <-r.Context().Done():
			return rv, true
		case <-time.After(time.Second):
			return "", false
		}
	}
	defer wi.Stop()
	tick := time.NewTicker(streamKeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return rv, true
		case <-tick.C:
			if !stream.keepAlive() {
				return rv, true
			}
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return rv, false
			}
			app, isApp := ev.Object.(*v1alpha1.Application)
			if !isApp {
				return "", false // an error, usually an expired resource version
			}
			rv = app.ResourceVersion
			if ev.Type != watch.Bookmark && wanted(app) && !send(ev.Type, app) {
				return rv, true
			}
		}
	}
}
