package profiler_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/capstan-cd/capstan/internal/profiler"
)

// The endpoints answer only while the mounted setting says "true", read
// at each request.
func ExampleRegister() {
	dir, _ := os.MkdirTemp("", "profiler")
	defer os.RemoveAll(dir)
	setting := filepath.Join(dir, "profiler.enabled")
	mux := http.NewServeMux()
	profiler.Register(mux, setting)
	get := func() int {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/pprof/cmdline", nil))
		return rec.Code
	}
	fmt.Println(get())
	_ = os.WriteFile(setting, []byte("true"), 0o600)
	fmt.Println(get())
	_ = os.WriteFile(setting, []byte("false"), 0o600)
	fmt.Println(get())
	// Output:
	// 401
	// 200
	// 401
}

func TestPath(t *testing.T) {
	t.Setenv(profiler.PathEnv, "")
	if got := profiler.Path(); got != profiler.DefaultPath {
		t.Errorf("default: %s", got)
	}
	t.Setenv(profiler.PathEnv, "/tmp/x")
	if got := profiler.Path(); got != "/tmp/x" {
		t.Errorf("from %s: %s", profiler.PathEnv, got)
	}
}
