package chaos

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// maxRSS is the peak resident memory the Capstan process may reach while
// it is abused.
const maxRSS = 300 << 20

// TestAbuseKeepsMemoryBounded throws at a running Capstan what once took
// it past gigabytes: failed logins with 3 MB user names, concurrent 100 MB
// requests without a session (REST and RPC), a Helm chart whose template
// writes gigabytes and a 50 MB manifest. Each is refused with a clear
// error, the process's peak resident memory stays under 300 MB, and it
// keeps serving.
func TestAbuseKeepsMemoryBounded(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	ns := cluster.NewNamespace(t)
	if err := kube.InstallCRDs(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	c := newCapstan(t, ns, "--server-port", fmt.Sprint(port), "--server-insecure")
	c.start()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitFor(t, "the API", func() error { return get(base + "/api/version") })

	// Logins with 3 MB user names.
	for range 100 {
		body := `{"username":"` + strings.Repeat("u", 3<<20) + `","password":"x"}`
		if code := post(t, base+"/api/v1/session", "application/json", strings.NewReader(body), -1); code != http.StatusRequestEntityTooLarge {
			t.Fatalf("a 3 MB login: %d, want 413", code)
		}
	}
	// Five concurrent 100 MB bodies of undeclared length, over REST and
	// over gRPC-Web (whose message prefix declares 100 MB).
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path, kind, prefix := "/api/v1/applications", "application/json", []byte(`{"metadata":{"name":"`)
			if i%2 == 1 {
				path, kind = "/capstan.v1.ApplicationService/Create", "application/grpc-web+proto"
				prefix = make([]byte, 5)
				binary.BigEndian.PutUint32(prefix[1:], 100<<20)
			}
			code := post(t, base+path, kind, io.MultiReader(bytes.NewReader(prefix), &zeros{n: 100 << 20}), -1)
			if code == http.StatusOK && i%2 == 0 {
				t.Errorf("a 100 MB REST body was accepted")
			}
		}()
	}
	wg.Wait()

	// A chart writing ~2 GB, and a 50 MB manifest, each in an Application.
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "hostile", map[string]string{
		"huge/Chart.yaml":        "apiVersion: v2\nname: huge\nversion: 1.0.0\n",
		"huge/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: huge}\ndata:\n  blob: \"{{ range $i := until 200000000 }}xxxxxxxxxx{{ end }}\"\n",
		"big/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  blob: " + strings.Repeat("z", 50<<20) + "\n",
	})
	kc, err := kube.NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"huge", "big"} {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: path, Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: path},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns}},
		}
		if err := kc.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{"huge": "more than 1024 MiB of memory", "big": "over 10000000 bytes"} {
		waitFor(t, path+"'s ComparisonError", func() error {
			app := &v1alpha1.Application{}
			if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: path}, app); err != nil {
				return err
			}
			for _, cond := range app.Status.Conditions {
				if cond.Type == v1alpha1.ApplicationConditionComparisonError && strings.Contains(cond.Message, want) {
					return nil
				}
			}
			return fmt.Errorf("conditions %v", app.Status.Conditions)
		})
	}

	if err := get(base + "/api/version"); err != nil {
		t.Errorf("after the abuse: %v", err)
	}
	if !c.alive() {
		t.Fatal("capstan exited")
	}
	peak := peakRSS(t, c.cmd.Process.Pid)
	t.Logf("peak resident memory of capstan: %d MiB", peak>>20)
	if peak > maxRSS {
		t.Errorf("peak resident memory %d MiB, want under %d MiB", peak>>20, maxRSS>>20)
	}
}

// zeros reads as n zero bytes.
type zeros struct{ n int }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	n := min(len(p), z.n)
	clear(p[:n])
	z.n -= n
	return n, nil
}

// post sends body (length declared when length >= 0) and returns the
// status, or 0 when the server cut the connection while it was sent.
func post(t *testing.T, url, contentType string, body io.Reader, length int64) int {
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", contentType)
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// peakRSS is a process's peak resident set size (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// waitFor polls check for up to two minutes.
func waitFor(t *testing.T, what string, check func() error) {
	t.Helper()
	eventually.Within(t, eventually.Options{Timeout: 2 * time.Minute, Interval: 250 * time.Millisecond}, what, func() string {
		if err := check(); err != nil {
			return err.Error()
		}
		return ""
	})
}
