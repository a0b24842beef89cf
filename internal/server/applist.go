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

// encodedApps keeps each Application's JSON encoding for its current
// resourceVersion, so that listing a thousand Applications answers with
// bytes already encoded instead of encoding every one on every request.
type encodedApps struct {
	mu sync.Mutex
	m  map[types.UID]encodedApp
}

type encodedApp struct {
	version string
	data    []byte
}

// encode returns app's JSON, encoding it only when it changed.
func (e *encodedApps) encode(app *v1alpha1.Application) ([]byte, error) {
	e.mu.Lock()
	got, ok := e.m[app.UID]
	e.mu.Unlock()
	if ok && got.version == app.ResourceVersion {
		return got.data, nil
	}
	data, err := json.Marshal(app)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if e.m == nil {
		e.m = map[types.UID]encodedApp{}
	}
	e.m[app.UID] = encodedApp{version: app.ResourceVersion, data: data}
	e.mu.Unlock()
	return data, nil
}

// forgetAllBut drops the encodings of Applications not in current (deleted
// ones), once there are many more encodings than Applications.
func (e *encodedApps) forgetAllBut(current []*v1alpha1.Application) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.m) <= 2*len(current)+64 {
		return
	}
	keep := make(map[types.UID]encodedApp, len(current))
	for _, app := range current {
		if got, ok := e.m[app.UID]; ok {
			keep[app.UID] = got
		}
	}
	e.m = keep
}

// writeApplicationList answers with an ApplicationList of apps, each from
// its kept encoding.
func (s *Server) writeApplicationList(w http.ResponseWriter, resourceVersion string, apps []*v1alpha1.Application) {
	var buf bytes.Buffer
	buf.WriteString(`{"metadata":`)
	meta, _ := json.Marshal(metav1.ListMeta{ResourceVersion: resourceVersion})
	buf.Write(meta)
	buf.WriteString(`,"items":[`)
	for i, app := range apps {
		data, err := s.encoded.encode(app)
		if err != nil {
			s.internal(w, err)
			return
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(data)
	}
	buf.WriteString("]}\n")
	s.encoded.forgetAllBut(apps)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}
