package chaos

import (
	"github.com/capstan-cd/capstan/internal/testing/localcluster"

	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

var outage = flag.Duration("chaos.outage", 25*time.Second, "how long the Kubernetes API server stays down (longer than the leader Lease)")

// TestStartsBeforeCRDsAndOutlivesAPIOutage starts Capstan before its CRDs
// exist (told not to install them), installs them a while later, then
// stops the Kubernetes API server in the middle of a sync for longer than
// the leader Lease lasts. Capstan must never exit, keep answering its own
// API, and converge once the API server is back.
func TestStartsBeforeCRDsAndOutlivesAPIOutage(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	deleteCRDs(t)
	ns := cluster.NewNamespace(t)
	port := freePort(t)
	c := newCapstan(t, ns, "--install-crds=false", "--leader-elect=true", "--server-port", fmt.Sprint(port), "--server-insecure")
	c.start()
	time.Sleep(5 * time.Second) // room for an exit that should not happen
	if !c.alive() {
		t.Fatal("capstan exited while its CRDs did not exist")
	}

	r := newRigIn(t, ns) // installs the CRDs and creates the Applications
	r.waitConverged(convergeTimeout)
	keepLogOnFailure(t, c)

	token := login(t, ns, port)
	r.commit()
	time.Sleep(time.Duration(newRand(t).Int64N(int64(2 * time.Second)))) // the outage starts at a random point of the sync
	if err := cluster.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	for time.Since(down) < *outage {
		if !c.alive() {
			t.Fatalf("capstan exited %s into the API server's outage", time.Since(down).Round(time.Second))
		}
		if err := get(fmt.Sprintf("http://127.0.0.1:%d/api/version", port)); err != nil {
			t.Errorf("%s into the outage, Capstan's API: %v", time.Since(down).Round(time.Second), err)
		}
		// Applications are still listed, from the API server's cache.
		if n, err := countApps(port, token); err != nil || n != len(allApps) {
			t.Errorf("%s into the outage, listing Applications: %d, %v", time.Since(down).Round(time.Second), n, err)
		}
		time.Sleep(time.Second) // the checks go on through the whole outage
	}
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := cluster.StartAPIServer(startCtx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	// The cluster's own controllers and kwok recover from the outage too
	// before the waved app's Deployments become Available again.
	r.waitConverged(2 * convergeTimeout)
	t.Logf("converged %s after the API server came back from %s down", time.Since(back).Round(time.Millisecond), outage.Round(time.Second))
	if !c.alive() || c.runs != 1 {
		t.Errorf("capstan exited (alive %v after %d starts)", c.alive(), c.runs)
	}
	r.checkHistory(2)
}

// deleteCRDs removes Capstan's CRDs, and with them every Application.
func deleteCRDs(t *testing.T) {
	localcluster.Need(t)
	t.Helper()
	ctx := context.Background()
	cs := apiextensionsclient.NewForConfigOrDie(cluster.Config)
	for _, name := range []string{"applications.argoproj.io", "appprojects.argoproj.io"} {
		if err := cs.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		waitFor(t, "CRD "+name+" deleted", func() error {
			if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
	}
}

func get(url string) error {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return nil
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// login returns a session token of admin, whose password Capstan wrote
// to argocd-initial-admin-secret.
func login(t *testing.T, ns string, port int) string {
	localcluster.Need(t)
	t.Helper()
	kc := kubernetes.NewForConfigOrDie(cluster.Config)
	var password string
	waitFor(t, "the initial admin password", func() error {
		s, err := kc.CoreV1().Secrets(ns).Get(context.Background(), "argocd-initial-admin-secret", metav1.GetOptions{})
		if err != nil {
			return err
		}
		password = string(s.Data["password"])
		return nil
	})
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/api/v1/session", port), "application/json",
		strings.NewReader(fmt.Sprintf(`{"username":"admin","password":%q}`, password)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || answer.Token == "" {
		t.Fatalf("login: %s %v", resp.Status, err)
	}
	return answer.Token
}

// countApps lists the Applications through Capstan's API.
func countApps(port int, token string) (int, error) {
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/api/v1/applications", port), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var list struct{ Items []json.RawMessage }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return 0, fmt.Errorf("%s: %w", resp.Status, err)
	}
	return len(list.Items), nil
}

var outages = flag.Int("chaos.outages", 1, "API server outages in the middle of syncs, one after the other (make chaos: 20)")

// TestOperationsFinishAcrossOutages stops the Kubernetes API server in the
// middle of a sync again and again, each time for a random part of the
// outage length, and checks every operation finishes once it is back:
// Synced to the commit, no operation left Running, one history entry per
// commit. (An operation once stayed Running for good after an outage.)
func TestOperationsFinishAcrossOutages(t *testing.T) {
	localcluster.Need(t)
	if *outages < 1 {
		t.Skip("-chaos.outages is 0")
	}
	rnd := newRand(t)
	ctx := context.Background()
	ns := cluster.NewNamespace(t)
	// Without leader election the controller is never restarted by the
	// outage: its failed reconciles' retries are what bring it back (the
	// other outage test loses and takes back the Lease).
	c := newCapstan(t, ns)
	c.start()
	r := newRigIn(t, ns)
	r.waitConverged(convergeTimeout)
	keepLogOnFailure(t, c)
	for i := 1; i <= *outages; i++ {
		r.commit()
		time.Sleep(time.Duration(rnd.Int64N(int64(3 * time.Second)))) // the outage starts at a random point of the sync
		length := *outage/4 + time.Duration(rnd.Int64N(int64(*outage*3/4)))
		if err := cluster.StopAPIServer(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(length) // the outage itself
		startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := cluster.StartAPIServer(startCtx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		back := time.Now()
		r.waitConverged(2 * convergeTimeout)
		t.Logf("outage %d of %s: converged %s after the API server came back", i, length.Round(time.Second), time.Since(back).Round(time.Millisecond))
		if !c.alive() {
			t.Fatalf("capstan exited after outage %d", i)
		}
	}
	r.checkHistory(*outages + 1)
}

// keepLogOnFailure copies the process's whole log where it outlives the
// test when the test fails, and says where; a process still running is
// first made to write every goroutine's stack into it (SIGQUIT), so a sync
// that hangs shows where.
func keepLogOnFailure(t *testing.T, c *capstan) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		if c.alive() {
			_ = c.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-c.done:
			case <-time.After(5 * time.Second):
			}
		}
		data, err := os.ReadFile(c.log)
		if err != nil {
			return
		}
		kept := filepath.Join(os.TempDir(), fmt.Sprintf("capstan-chaos-%s-%d.log", t.Name(), time.Now().Unix()))
		if os.WriteFile(kept, data, 0o644) == nil {
			t.Logf("capstan's whole log kept in %s", kept)
		}
	})
}
