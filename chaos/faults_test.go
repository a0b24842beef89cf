package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/faultproxy"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/redisserver"
)

// outageLength is how long a dependency stays away in these tests.
const outageLength = 6 * time.Second

// TestGitServerGoneMidFetch follows a Git server over HTTP through a proxy
// that is cut while Capstan fetches a new revision, and stays away a
// while: nothing Git declares is pruned meanwhile, and once the server is
// back every Application converges.
func TestGitServerGoneMidFetch(t *testing.T) {
	localcluster.Need(t)
	srv := gitserver.New(t)
	repo := srv.NewRepo(t, "apps")
	proxy := faultproxy.New(t, strings.TrimPrefix(srv.URL, "http://"))
	url := "http://" + proxy.Addr + "/apps.git"
	ns := cluster.NewNamespace(t)
	repositorySecret(t, ns, url, srv.Username, srv.Password)
	r := newRigOver(t, ns, repo, url)
	c := newCapstan(t, r.ns)
	c.start()
	r.waitConverged(convergeTimeout)
	rng := newRand(t)
	for i := 1; i <= *iterations; i++ {
		r.commit()
		time.Sleep(time.Duration(rng.Int64N(int64(1500 * time.Millisecond)))) // the cut comes at a random point of a fetch
		proxy.Down()
		deadline := time.Now().Add(outageLength)
		for time.Now().Before(deadline) {
			if why := r.holdsARevision(context.Background(), r.rev-1, r.rev); why != "" {
				t.Fatalf("iteration %d, Git away: %s", i, why)
			}
			time.Sleep(500 * time.Millisecond) // the check goes on through the whole outage
		}
		proxy.Up()
		back := time.Now()
		r.waitConverged(convergeTimeout)
		t.Logf("iteration %d: converged %s after Git came back", i, time.Since(back).Round(time.Millisecond))
	}
}

// TestRedisGone runs Capstan with its manifest cache in Redis, takes Redis
// away while revisions are pushed, and brings it back: rendering goes on
// without the cache, and every revision converges.
func TestRedisGone(t *testing.T) {
	localcluster.Need(t)
	proxy := faultproxy.New(t, redisserver.Start(t))
	r := newRig(t)
	c := newCapstan(t, r.ns, "--redis", proxy.Addr)
	c.start()
	r.waitConverged(convergeTimeout)
	proxy.Down()
	for i := 1; i <= 2; i++ {
		r.commit()
		start := time.Now()
		r.waitConverged(convergeTimeout)
		t.Logf("revision %d converged %s after its push, Redis away", r.rev, time.Since(start).Round(time.Millisecond))
	}
	proxy.Up()
	r.commit()
	r.waitConverged(convergeTimeout)
	if !c.alive() {
		t.Fatal("capstan exited")
	}
}

// TestDiskFullForTheRepositoryCache gives Capstan a small file system for
// its clones, checkouts and render workers, fills it while a revision is
// pushed, and then frees it: meanwhile the Applications report the error
// and nothing Git declares is pruned; after, they converge. It needs to
// mount a tmpfs, so it runs as root only.
func TestDiskFullForTheRepositoryCache(t *testing.T) {
	localcluster.Need(t)
	root := filepath.Join(t.TempDir(), "small")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", root).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small file system here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", root).Run() })
	r := newRig(t)
	// Without a repo error grace period: the full disk is to be reported
	// as soon as it is met, not once the grace period (180 s) is over.
	c := newCapstan(t, r.ns, "--root", root, "--repo-error-grace-period-seconds", "0")
	c.start()
	r.waitConverged(convergeTimeout)

	junk := filepath.Join(root, "junk")
	fill(t, junk)
	r.commit()
	waitFor(t, "an error on an Application", func() error {
		for _, name := range allApps {
			app := &v1alpha1.Application{}
			if err := r.client.Get(context.Background(), clientKey(r.ns, name), app); err != nil {
				return err
			}
			for _, cond := range app.Status.Conditions {
				if cond.Type == v1alpha1.ApplicationConditionComparisonError && strings.Contains(strings.ToLower(cond.Message), "no space left on device") {
					return nil
				}
			}
		}
		return fmt.Errorf("no ComparisonError saying the disk is full")
	})
	if why := r.holdsARevision(context.Background(), r.rev-1, r.rev); why != "" {
		t.Fatalf("disk full: %s", why)
	}
	if err := os.Remove(junk); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r.waitConverged(convergeTimeout)
	t.Logf("converged %s after the disk had room again", time.Since(start).Round(time.Millisecond))
}

// fill writes path until its file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for size := 1 << 20; size > 0; size /= 2 {
		chunk := make([]byte, size)
		for {
			if _, err := f.Write(chunk); err != nil {
				break
			}
		}
	}
}

// repositorySecret stores Argo CD's repository Secret for url.
func repositorySecret(t *testing.T, ns, url, username, password string) {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "repo-apps", Namespace: ns, Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepository}},
		StringData: map[string]string{"url": url, "username": username, "password": password},
	}
	if err := newKubeClient(t).Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}
