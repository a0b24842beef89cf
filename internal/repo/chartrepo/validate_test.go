package chartrepo

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/repo/git"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		repo, chart string
		ok          bool
	}{
		{"https://charts.bitnami.com/bitnami", "nginx", true},
		{"oci://registry-1.docker.io/bitnamicharts", "nginx", true},
		{"registry-1.docker.io/bitnamicharts", "nginx", true},
		{"http://localhost:8080/charts", "my_chart-1.0", true},

		{"https://charts.example.com", "../../etc", false},
		{"https://charts.example.com", "a/b", false},
		{"https://charts.example.com", "", false},
		{"https://charts.example.com", "-x", false},
		{"https://charts.example.com", ".hidden", false},
		{"file:///etc", "nginx", false},
		{"ftp://charts.example.com", "nginx", false},
		{"--repo=x", "nginx", false},
		{"https://charts.example.com\n", "nginx", false},
		{"", "nginx", false},
	} {
		err := Validate(tc.repo, tc.chart)
		if (err == nil) != tc.ok {
			t.Errorf("Validate(%q, %q) = %v, want ok=%v", tc.repo, tc.chart, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidChart) {
			t.Errorf("Validate(%q, %q) = %v, want ErrInvalidChart", tc.repo, tc.chart, err)
		}
	}
}

// TestDownloadsAreBounded serves an index larger than the limit, once
// with its length announced and once streamed without, and checks both
// are refused without being read whole; and that credentials go only to
// the repository's own host.
func TestDownloadsAreBounded(t *testing.T) {
	defer func(old int64) { MaxDownloadBytes = old }(MaxDownloadBytes)
	MaxDownloadBytes = 1 << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/announced/index.yaml" {
			w.Header().Set("Content-Length", "1073741824")
		}
		chunk := []byte(strings.Repeat("#", 64<<10))
		for i := 0; i < 1<<14; i++ { // up to 1 GiB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c := NewClient(Options{Root: t.TempDir()})
	for _, path := range []string{"/announced", "/streamed"} {
		_, err := c.Resolve(context.Background(), srv.URL+path, "nginx", "*", git.Creds{}, true)
		if err == nil || !strings.Contains(err.Error(), "over the limit") {
			t.Errorf("%s: got %v, want a size refusal", path, err)
		}
	}

	sawAuth := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth <- r.Header.Get("Authorization")
		http.NotFound(w, r)
	}))
	defer other.Close()
	if _, err := NewClient(Options{}).httpGet(context.Background(), srv.URL, other.URL+"/chart.tgz", git.Creds{Username: "u", Password: "secret"}); err == nil {
		t.Error("a 404 was taken for a chart")
	}
	if got := <-sawAuth; got != "" {
		t.Errorf("another host was sent %q, want no credentials", got)
	}
}
