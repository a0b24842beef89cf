package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// treeInterval is how often a streamed resource tree is read again; it is
// also read at once when its Application changes.
const treeInterval = 3 * time.Second

// streamResourceTree answers GET /api/v1/stream/applications/{name}/resource-tree
// with Server-Sent Events: the app's resource tree, and again each time it
// changes (a Pod started, a health changed), as Argo CD's UI follows it.
func (s *Server) streamResourceTree(w http.ResponseWriter, r *http.Request, c *caller) error {
	r.SetPathValue("name", r.PathValue("applicationName"))
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return err
	}
	stream := s.startEventStream(w)
	if stream == nil {
		return nil
	}
	changed, stop := s.watchApp(r, app)
	defer stop()
	tick := time.NewTicker(treeInterval)
	defer tick.Stop()
	idle := time.Now()
	var last []byte
	for {
		tree, err := s.state.Tree(r.Context(), app)
		if err != nil {
			s.opts.Log.Warn("reading a resource tree for a stream", "application", app.Namespace+"/"+app.Name, "error", err)
		} else if data, _ := json.Marshal(tree); !bytes.Equal(data, last) {
			if !stream.send(tree) {
				return nil
			}
			last, idle = data, time.Now()
		}
		select {
		case <-r.Context().Done():
			return nil
		case fresh := <-changed:
			if fresh == nil {
				return nil // the Application is gone
			}
			app = fresh
		case <-tick.C:
			if time.Since(idle) >= streamKeepAlive {
				if !stream.keepAlive() {
					return nil
				}
				idle = time.Now()
			}
		}
	}
}

// watchApp sends each new version of app, and nil when it is deleted,
// until the request ends; stop ends it. When the watch cannot be made or
// ends, nothing more is sent: the periodic read still follows the tree.
func (s *Server) watchApp(r *http.Request, app *v1alpha1.Application) (<-chan *v1alpha1.Application, func()) {
	out := make(chan *v1alpha1.Application, 1)
	wi, err := s.watcher.Watch(r.Context(), &v1alpha1.ApplicationList{}, client.InNamespace(app.Namespace),
		client.MatchingFields{"metadata.name": app.Name})
	if err != nil {
		return out, func() {}
	}
	go func() {
		for ev := range wi.ResultChan() {
			fresh, ok := ev.Object.(*v1alpha1.Application)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted {
				select {
				case <-out: // a pending change no longer matters
				default:
				}
				out <- nil // the only sender: there is room now
				return
			}
			select {
			case out <- fresh:
			default: // the reader has not taken the last one yet; the next read sees the newest
			}
		}
	}()
	return out, wi.Stop
}
