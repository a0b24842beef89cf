package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// encodedApps keeps each Application's JSON encodings for its current
// resourceVersion, so that listing or streaming a thousand Applications
// answers with bytes already encoded instead of encoding every one on
// every request: the whole object, and the views of a few field
// selections.
type encodedApps struct {
	mu    sync.Mutex
	m     map[encodingKey]encodedApp
	views map[string]bool
}

// encodingKey names one encoding: of an Application, whole ("") or a view.
type encodingKey struct {
	uid  types.UID
	view string
}

type encodedApp struct {
	version string
	data    []byte
}

// maxKeptViews bounds the views kept besides the whole objects: the few
// the web UI and the CLI use. Others are encoded on every request.
const maxKeptViews = 8

// encode returns app's JSON, encoding it only when it changed.
func (e *encodedApps) encode(app *v1alpha1.Application) ([]byte, error) {
	return e.encodeView(app, "", func() ([]byte, error) { return json.Marshal(app) })
}

// encodeView returns the view of app that encode makes, made again only
// when the Application changed.
func (e *encodedApps) encodeView(app *v1alpha1.Application, view string, encode func() ([]byte, error)) ([]byte, error) {
	key := encodingKey{uid: app.UID, view: view}
	e.mu.Lock()
	got, ok := e.m[key]
	e.mu.Unlock()
	if ok && got.version == app.ResourceVersion {
		return got.data, nil
	}
	data, err := encode()
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m, e.views = map[encodingKey]encodedApp{}, map[string]bool{}
	}
	if view != "" && !e.views[view] {
		if len(e.views) >= maxKeptViews {
			return data, nil
		}
		e.views[view] = true
	}
	e.m[key] = encodedApp{version: app.ResourceVersion, data: data}
	return data, nil
}

// forgetAllBut drops the encodings of Applications not in current (deleted
// ones), once there are many more encodings than Applications.
func (e *encodedApps) forgetAllBut(current []*v1alpha1.Application) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.m) <= (2+len(e.views))*len(current)+64 {
		return
	}
	live := make(map[types.UID]bool, len(current))
	for _, app := range current {
		live[app.UID] = true
	}
	for key := range e.m {
		if !live[key.uid] {
			delete(e.m, key)
		}
	}
}

// appList is a list answer: its items, the list's version, the next
// page's token, and whether it is every Application the caller sees.
type appList struct {
	version, next string
	apps          []*v1alpha1.Application
	whole         bool
}

// applicationListAnswer is an ApplicationList of list's items, each from
// its kept encoding, with the selected fields only: an answer that writes
// itself, as it is put together from encodings made before.
type applicationListAnswer struct {
	s      *Server
	list   appList
	fields fieldSelection
}

func (a applicationListAnswer) writeAnswer(w http.ResponseWriter) {
	a.s.writeApplicationList(w, a.list, a.fields)
}

// writeApplicationList answers with an ApplicationList of list's items,
// each from its kept encoding, with the selected fields only.
func (s *Server) writeApplicationList(w http.ResponseWriter, list appList, fields fieldSelection) {
	apps := list.apps
	encode := s.encoded.encode
	if !fields.all() {
		listed, view := fields.listFields(), "list:"+fields.key
		encode = func(app *v1alpha1.Application) ([]byte, error) {
			return s.encoded.encodeView(app, view, func() ([]byte, error) { return projectApp(app, listed) })
		}
	}
	var buf bytes.Buffer
	buf.WriteString(`{"metadata":`)
	meta, _ := json.Marshal(metav1.ListMeta{ResourceVersion: list.version, Continue: list.next})
	buf.Write(meta)
	buf.WriteString(`,"items":[`)
	for i, app := range apps {
		data, err := encode(app)
		if err != nil {
			s.reply(w, nil, err)
			return
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(data)
	}
	buf.WriteString("]}\n")
	if list.whole { // a page does not tell which Applications are gone
		s.encoded.forgetAllBut(apps)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}
