package server

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// applicationSetEvents answers GET /api/v1/applicationsets/{name}/events:
// the Kubernetes Events about the ApplicationSet, for a caller who may
// get it.
func (s *Server) applicationSetEvents(r *http.Request, c *caller) (any, error) {
	as, err := s.loadAppSet(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	list := &corev1.EventList{}
	err = s.opts.Client.List(r.Context(), list, client.InNamespace(as.Namespace),
		client.MatchingFields{"involvedObject.name": as.Name, "involvedObject.uid": string(as.UID)})
	return list, err
}

// appSetFilter is what a watch of ApplicationSets keeps.
type appSetFilter struct {
	ns, name   string
	projects   []string
	selector   labels.Selector
	minVersion uint64
}

// keeps reports whether an ApplicationSet passes the filter.
func (f appSetFilter) keeps(as *v1alpha1.ApplicationSet) bool {
	v, err := strconv.ParseUint(as.ResourceVersion, 10, 64)
	return (f.name == "" || as.Name == f.name) && (len(f.projects) == 0 || slices.Contains(f.projects, as.Spec.Template.Spec.Project)) &&
		f.selector.Matches(labels.Set(as.Labels)) && (err != nil || v >= f.minVersion)
}

// appSetFilterOf reads a watch query: name, projects, selector,
// appSetNamespace (or appsetNamespace) and resourceVersion.
func (s *Server) appSetFilterOf(r *http.Request) (appSetFilter, error) {
	q := r.URL.Query()
	f := appSetFilter{ns: q.Get("appSetNamespace"), name: q.Get("name"), projects: q["projects"], selector: labels.Everything()}
	if f.ns == "" {
		f.ns = q.Get("appsetNamespace")
	}
	if f.ns == "" {
		f.ns = s.opts.Namespace
	}
	if err := checkName("namespace", f.ns); err != nil {
		return f, err
	}
	if sel := q.Get("selector"); sel != "" {
		parsed, err := labels.Parse(sel)
		if err != nil {
			return f, badRequest(fmt.Sprintf("invalid selector %q: %v", sel, err))
		}
		f.selector = parsed
	}
	f.minVersion, _ = strconv.ParseUint(q.Get("resourceVersion"), 10, 64)
	return f, nil
}

// streamApplicationSets answers GET /api/v1/stream/applicationsets: as
// Argo CD's Watch, the ApplicationSets the caller may get that the query
// keeps — first as they are (when no resourceVersion is given or one is
// named), then each change — as Server-Sent Events.
func (s *Server) streamApplicationSets(w http.ResponseWriter, r *http.Request, c *caller) error {
	f, err := s.appSetFilterOf(r)
	if err != nil {
		return err
	}
	var list v1alpha1.ApplicationSetList
	if err := s.watcher.List(r.Context(), &list, client.InNamespace(f.ns)); err != nil {
		return err
	}
	watcher, err := s.watcher.Watch(r.Context(), &v1alpha1.ApplicationSetList{}, client.InNamespace(f.ns),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return fmt.Errorf("following the ApplicationSets of namespace %s: %w", f.ns, err)
	}
	defer watcher.Stop()
	stream := s.startEventStream(w)
	if stream == nil {
		return nil
	}
	send := func(typ watch.EventType, as *v1alpha1.ApplicationSet) bool {
		if !f.keeps(as) || !c.can(rbac.ResourceApplicationSets, rbac.ActionGet, s.appSetObject(as)) {
			return true
		}
		as.ManagedFields = nil
		return stream.send(map[string]any{"type": typ, "applicationSet": as})
	}
	if r.URL.Query().Get("resourceVersion") == "" || f.name != "" {
		slices.SortFunc(list.Items, func(a, b v1alpha1.ApplicationSet) int { return strings.Compare(a.Name, b.Name) })
		for i := range list.Items {
			if !send(watch.Added, &list.Items[i]) {
				return nil
			}
		}
	}
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
		case ev, open := <-watcher.ResultChan():
			if !open {
				return nil // the API server ended the watch; the client reconnects
			}
			as, ok := ev.Object.(*v1alpha1.ApplicationSet)
			if ok && (ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted) && !send(ev.Type, as) {
				return nil
			}
		}
	}
}
