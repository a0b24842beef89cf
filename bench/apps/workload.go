package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// monorepo creates a bare repository with one directory per app and returns its URL.
func monorepo(dir string, n int, value string) (string, error) {
	bare := filepath.Join(dir, "monorepo.git")
	if _, err := git(dir, "init", "-q", "--bare", "-b", "main", bare); err != nil {
		return "", err
	}
	if _, err := git(dir, "clone", "-q", bare, filepath.Join(dir, "work")); err != nil {
		return "", err
	}
	if _, err := commitAll(dir, n, value); err != nil {
		return "", err
	}
	return "file://" + bare, nil
}

func commitAll(dir string, n int, value string) (string, error) {
	work := filepath.Join(dir, "work")
	for i := range n {
		app := filepath.Join(work, "apps", fmt.Sprintf("app-%05d", i))
		if err := os.MkdirAll(app, 0o755); err != nil {
			return "", err
		}
		cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-%05d\ndata:\n  value: %s\n", i, value)
		if err := os.WriteFile(filepath.Join(app, "cm.yaml"), []byte(cm), 0o644); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", value}, {"push", "-q", "origin", "HEAD:main"}} {
		if _, err := git(work, args...); err != nil {
			return "", err
		}
	}
	return git(work, "rev-parse", "HEAD")
}

// parallel calls f for 0..n-1, workers at a time, and returns an error
// of one of them.
func parallel(n, workers int, f func(i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range work {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

// workload is the bench's Applications: in namespace ns, each deploying
// one ConfigMap of the monorepo to namespace dest, of the control cluster
// or, with servers, of servers[i mod len(servers)].
type workload struct {
	ns, dest, repoURL string
	servers           []string
}

// server is the destination cluster of the i-th app.
func (w workload) server(i int) string {
	if len(w.servers) == 0 {
		return "https://kubernetes.default.svc"
	}
	return w.servers[i%len(w.servers)]
}

// create creates n Applications, workers at a time.
func (w workload) create(ctx context.Context, c client.Client, n, workers int) error {
	return parallel(n, workers, func(i int) error { return c.Create(ctx, w.app(i)) })
}

// app is the i-th Application: automated, one ConfigMap from the monorepo.
func (w workload) app(i int) *v1alpha1.Application {
	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%05d", i), Namespace: w.ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: w.repoURL, Path: fmt.Sprintf("apps/app-%05d", i), TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: w.server(i), Namespace: w.dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
		},
	}
}

// waitSynced polls until n Applications are Synced (at revision, if set),
// leaving out those deploying to except, if set. It reads a watch-fed
// cache: listing thousands of Applications from the API server every poll
// would load it more than the controller does.
func waitSynced(ctx context.Context, c ctrlcache.Informers, ns string, n int, revision, except string, timeout time.Duration) error {
	inf, err := c.GetInformer(ctx, &v1alpha1.Application{})
	if err != nil {
		return err
	}
	// The informer's own objects, read in place: a cache List copies
	// every Application on each poll, which at 10,000 apps was most of
	// what this process allocated.
	store, ok := inf.(interface{ GetStore() toolscache.Store })
	if !ok {
		return fmt.Errorf("the Applications informer %T has no store", inf)
	}
	deadline := time.Now().Add(timeout)
	for {
		done, waiting := 0, ""
		for _, obj := range store.GetStore().List() {
			a, ok := obj.(*v1alpha1.Application)
			if !ok || a.Namespace != ns || (except != "" && a.Spec.Destination.Server == except) {
				continue
			}
			if a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && (revision == "" || a.Status.Sync.Revision == revision) &&
				a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded &&
				(revision == "" || a.Status.OperationState.SyncResult.Revision == revision) {
				done++
			} else if waiting == "" {
				waiting = describe(a)
			}
		}
		if done == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d Applications Synced after %s; one waiting: %s", done, n, timeout, waiting)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// describe says where an Application's sync stands.
func describe(a *v1alpha1.Application) string {
	s := fmt.Sprintf("%s %s at %.7s", a.Name, a.Status.Sync.Status, a.Status.Sync.Revision)
	if st := a.Status.OperationState; st != nil {
		s += fmt.Sprintf(", operation %s", st.Phase)
		if st.SyncResult != nil {
			s += fmt.Sprintf(" at %.7s", st.SyncResult.Revision)
		}
	}
	for _, c := range a.Status.Conditions {
		s += fmt.Sprintf("; %s: %s", c.Type, c.Message)
	}
	return s
}

// slimApplication keeps only what waitSynced reads of an Application.
func slimApplication(obj any) (any, error) {
	a, ok := obj.(*v1alpha1.Application)
	if !ok {
		return obj, nil
	}
	slim := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: a.Name, Namespace: a.Namespace, ResourceVersion: a.ResourceVersion}}
	slim.Spec.Destination.Server = a.Spec.Destination.Server
	slim.Status.Sync = v1alpha1.SyncStatus{Status: a.Status.Sync.Status, Revision: a.Status.Sync.Revision}
	slim.Status.Conditions = a.Status.Conditions
	if st := a.Status.OperationState; st != nil {
		slim.Status.OperationState = &v1alpha1.OperationState{Phase: st.Phase}
		if st.SyncResult != nil {
			slim.Status.OperationState.SyncResult = &v1alpha1.SyncOperationResult{Revision: st.SyncResult.Revision}
		}
	}
	return slim, nil
}

// peakRSS is this process's VmHWM, in KiB.
func peakRSS() int64 { return processRSS(os.Getpid()) }

// vmHWM reads VmHWM from a /proc/<pid>/status, in KiB.
func vmHWM(sc *bufio.Scanner) int64 { return statusField(sc, "VmHWM") }

// statusField reads one field of a /proc/<pid>/status, in KiB.
func statusField(sc *bufio.Scanner, name string) int64 {
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return 0
}
