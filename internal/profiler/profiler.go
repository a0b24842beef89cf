// Package profiler serves Go's pprof endpoints beside a component's
// metrics, as Argo CD's components do when argocd-cmd-params-cm's
// <component>.profile.enabled is "true". The install mounts that key as a
// file, read at each request, so turning profiling on or off needs no
// restart; without the file every endpoint answers 401.
//
//	mux := http.NewServeMux()
//	profiler.Register(mux, profiler.Path())
package profiler

import (
	"bytes"
	"net/http"
	"net/http/pprof"
	"os"
)

// DefaultPath is where Argo CD's install mounts the setting.
const DefaultPath = "/home/argocd/params/profiler.enabled"

// PathEnv names the variable that moves the file, as Argo CD's
// ARGOCD_ENABLE_PROFILER_FILE_PATH does.
const PathEnv = "ARGOCD_ENABLE_PROFILER_FILE_PATH"

// Path is the file that turns profiling on: PathEnv's value, else
// DefaultPath.
func Path() string {
	if p := os.Getenv(PathEnv); p != "" {
		return p
	}
	return DefaultPath
}

// Handlers are the pprof endpoints by path, each served only while the
// file at path holds "true" (for servers that take extra handlers as a
// map, such as controller-runtime's metrics server).
func Handlers(path string) map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        gated(path, pprof.Index),
		"/debug/pprof/cmdline": gated(path, pprof.Cmdline),
		"/debug/pprof/profile": gated(path, pprof.Profile),
		"/debug/pprof/symbol":  gated(path, pprof.Symbol),
		"/debug/pprof/trace":   gated(path, pprof.Trace),
	}
}

// Register adds Handlers(path) to mux.
func Register(mux *http.ServeMux, path string) {
	for p, h := range Handlers(path) {
		mux.Handle(p, h)
	}
}

// gated serves h while the file at path holds "true", else 401.
func gated(path string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if data, err := os.ReadFile(path); err != nil || !bytes.Equal(bytes.TrimSpace(data), []byte("true")) {
			http.Error(w, "Profiler endpoint is not enabled in 'argocd-cmd-params-cm' ConfigMap", http.StatusUnauthorized)
			return
		}
		h(w, r)
	})
}
