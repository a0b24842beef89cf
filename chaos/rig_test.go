package chaos

import (
	"github.com/capstan-cd/capstan/internal/testing/localcluster"

	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// The four kinds of sync the faults land in.
const (
	appHooked  = "hooked"  // a PreSync hook Job (deleted when it succeeds), then a ConfigMap
	appWaved   = "waved"   // four waves, each waiting on the health of the one before
	appPruning = "pruning" // every revision replaces its ConfigMaps: each sync prunes
	appPlain   = "plain"   // fifty ConfigMaps in one wave
)

var allApps = []string{appHooked, appWaved, appPruning, appPlain}

// rig is a control namespace with the four Applications, following one
// Git repository whose every revision changes all of them.
type rig struct {
	t      *testing.T
	ns     string
	client client.Client
	kube   kubernetes.Interface
	git    *gitserver.Repo
	// rev is the latest revision's number and sha its commit.
	rev int
	sha string
	// hookRuns counts the hook Jobs created in hooked's namespace.
	hookRuns atomic.Int64
}

func newRig(t *testing.T) *rig {
	localcluster.Need(t)
	t.Helper()
	return newRigIn(t, cluster.NewNamespace(t))
}

// newRigIn is newRig with the control namespace ns.
func newRigIn(t *testing.T, ns string) *rig {
	t.Helper()
	repo := gitserver.NewLocalRepo(t)
	return newRigOver(t, ns, repo, repo.URL)
}

// newRigOver is newRigIn with the Applications following repoURL, a way
// to reach repo (through a proxy, say); commits go to repo directly.
func newRigOver(t *testing.T, ns string, repo *gitserver.Repo, repoURL string) *rig {
	localcluster.Need(t)
	t.Helper()
	ctx := context.Background()
	c, err := kube.NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := kube.InstallCRDs(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, ns: ns, client: c, kube: kubernetes.NewForConfigOrDie(cluster.Config), git: repo}
	r.commit()
	for _, name := range allApps {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: name, TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: r.dest(name)},
				SyncPolicy: &v1alpha1.SyncPolicy{
					Automated:   &v1alpha1.SyncPolicyAutomated{Prune: true},
					SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true"},
				},
				RevisionHistoryLimit: ptr.To[int64](10000),
			},
		}
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = r.kube.CoreV1().Namespaces().Delete(context.Background(), r.dest(name), metav1.DeleteOptions{})
		})
	}
	r.countHookRuns()
	return r
}

// dest is an Application's destination namespace.
func (r *rig) dest(app string) string { return r.ns + "-" + app }

// commit pushes the next revision.
func (r *rig) commit() {
	r.rev++
	files := map[string]string{}
	for _, name := range allApps {
		for path := range r.manifests(name, r.rev-1) {
			files[path] = "" // removed unless written again below
		}
		for path, content := range r.manifests(name, r.rev) {
			files[path] = content
		}
	}
	r.sha = r.git.Commit(r.t, fmt.Sprintf("revision %d", r.rev), files)
}

// manifests are an app's files at revision rev (none before revision 1).
func (r *rig) manifests(app string, rev int) map[string]string {
	if rev < 1 {
		return nil
	}
	cm := func(name string, wave int) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  annotations: {argocd.argoproj.io/sync-wave: \"%d\"}\ndata: {revision: \"%d\"}\n", name, wave, rev)
	}
	deploy := func(name string, wave int) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  annotations: {argocd.argoproj.io/sync-wave: "%[2]d"}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}, annotations: {revision: "%[3]d"}}
    spec:
      containers: [{name: main, image: registry.local/%[1]s:1.0}]
`, name, wave, rev)
	}
	switch app {
	case appHooked:
		return map[string]string{
			"hooked/hook.yaml": fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: migrate-%d
  annotations: {argocd.argoproj.io/hook: PreSync, argocd.argoproj.io/hook-delete-policy: HookSucceeded}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: registry.local/migrate:1.0}]
`, rev),
			"hooked/config.yaml": cm("config", 0),
		}
	case appWaved:
		return map[string]string{
			"waved/a.yaml": deploy("a", 0), "waved/b.yaml": cm("b", 1),
			"waved/c.yaml": deploy("c", 2), "waved/d.yaml": cm("d", 3),
		}
	case appPruning:
		out := map[string]string{}
		for i := range 3 {
			name := fmt.Sprintf("r%d-%d", rev, i)
			out["pruning/"+name+".yaml"] = cm(name, 0)
		}
		return out
	case appPlain:
		var b strings.Builder
		for i := range 50 {
			b.WriteString("---\n" + cm(fmt.Sprintf("plain-%02d", i), 0))
		}
		return map[string]string{"plain/all.yaml": b.String()}
	}
	return nil
}

// declared are the names Git declares for an app at the latest revision,
// by kind (hooks left out: they are not kept).
func (r *rig) declared(app string) map[string][]string { return r.declaredAt(app, r.rev) }

// declaredAt is declared at revision rev.
func (r *rig) declaredAt(app string, rev int) map[string][]string {
	out := map[string][]string{}
	for path, content := range r.manifests(app, rev) {
		if strings.HasSuffix(path, "hook.yaml") {
			continue
		}
		for _, doc := range strings.Split(content, "---\n") {
			kind, name := field(doc, "kind: "), field(doc, "  name: ")
			if kind != "" {
				out[kind] = append(out[kind], name)
			}
		}
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out
}

func field(doc, prefix string) string {
	for _, line := range strings.Split(doc, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return v
		}
	}
	return ""
}

// live are the names of an app's ConfigMaps and Deployments in its namespace.
func (r *rig) live(ctx context.Context, app string) (map[string][]string, error) {
	out := map[string][]string{}
	cms, err := r.kube.CoreV1().ConfigMaps(r.dest(app)).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, cm := range cms.Items {
		if cm.Name != "kube-root-ca.crt" && cm.DeletionTimestamp == nil {
			out["ConfigMap"] = append(out["ConfigMap"], cm.Name)
		}
	}
	ds, err := r.kube.AppsV1().Deployments(r.dest(app)).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, d := range ds.Items {
		if d.DeletionTimestamp == nil {
			out["Deployment"] = append(out["Deployment"], d.Name)
		}
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out, nil
}

// holdsARevision reports whether every app's live objects include all of
// what one of the given revisions declares: whatever a fault interrupted,
// nothing Git declares was pruned.
func (r *rig) holdsARevision(ctx context.Context, revs ...int) string {
	for _, name := range allApps {
		live, err := r.live(ctx, name)
		if err != nil {
			return err.Error()
		}
		held := false
		for _, rev := range revs {
			held = held || includes(live, r.declaredAt(name, rev))
		}
		if !held {
			return fmt.Sprintf("%s: live %v holds none of revisions %v", name, live, revs)
		}
	}
	return ""
}

func includes(live, want map[string][]string) bool {
	for kind, names := range want {
		have := map[string]bool{}
		for _, n := range live[kind] {
			have[n] = true
		}
		for _, n := range names {
			if !have[n] {
				return false
			}
		}
	}
	return true
}

// countHookRuns counts the hook Jobs created in hooked's namespace, for
// the whole test, following the watch across its restarts.
func (r *rig) countHookRuns() {
	ctx, cancel := context.WithCancel(context.Background())
	r.t.Cleanup(cancel)
	ns := r.dest(appHooked)
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return r.kube.BatchV1().Jobs(ns).Watch(ctx, opts)
	}}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, "1", lw)
	if err != nil {
		r.t.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ev.Type == watch.Added {
				r.hookRuns.Add(1)
			}
		}
	}()
}

// converged reports "" once every Application has synced the latest
// revision, finished its operation, and its live objects are exactly the
// ones Git declares; otherwise what is still off.
func (r *rig) converged(ctx context.Context) string {
	for _, name := range allApps {
		app := &v1alpha1.Application{}
		if err := r.client.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: name}, app); err != nil {
			return err.Error()
		}
		st := app.Status.OperationState
		switch {
		case app.Status.Sync.Revision != r.sha || app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced:
			var outOfSync []string
			for _, rs := range app.Status.Resources {
				if rs.Status != v1alpha1.SyncStatusCodeSynced {
					outOfSync = append(outOfSync, rs.Kind+"/"+rs.Name)
				}
			}
			return fmt.Sprintf("%s: %s at %.7s, want Synced at %.7s (out of sync %v, conditions %v, last operation %s)",
				name, app.Status.Sync.Status, app.Status.Sync.Revision, r.sha, outOfSync, app.Status.Conditions, describe(st))
		case app.Operation != nil:
			return name + ": an operation is still requested"
		case st == nil || st.Phase != v1alpha1.OperationSucceeded || st.SyncResult == nil || st.SyncResult.Revision != r.sha:
			return fmt.Sprintf("%s: last operation %s", name, describe(st))
		}
		live, err := r.live(ctx, name)
		if err != nil {
			return err.Error()
		}
		if want := r.declared(name); fmt.Sprint(live) != fmt.Sprint(want) {
			return fmt.Sprintf("%s: live %v, Git declares %v", name, live, want)
		}
	}
	return ""
}

func describe(st *v1alpha1.OperationState) string {
	if st == nil {
		return "none"
	}
	rev := ""
	if st.SyncResult != nil {
		rev = st.SyncResult.Revision
	}
	return fmt.Sprintf("%s at %.7s: %s", st.Phase, rev, st.Message)
}

// waitConverged waits for converged, failing the test after timeout.
func (r *rig) waitConverged(timeout time.Duration) {
	r.t.Helper()
	ctx := context.Background()
	converged := false
	defer func() {
		if !converged {
			r.t.Logf("the workloads:\n%s", r.workloads(ctx))
		}
	}()
	eventually.Within(r.t, eventually.Options{Timeout: timeout, Interval: 250 * time.Millisecond}, fmt.Sprintf("revision %d converged", r.rev), func() string {
		return r.converged(ctx)
	})
	converged = true
}

// workloads describes the Deployments and Pods of every app, for a run
// that did not converge: a sync waiting for health waits on these.
func (r *rig) workloads(ctx context.Context) string {
	var b strings.Builder
	for _, name := range allApps {
		ds, err := r.kube.AppsV1().Deployments(r.dest(name)).List(ctx, metav1.ListOptions{})
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", name, err)
			continue
		}
		for _, d := range ds.Items {
			fmt.Fprintf(&b, "%s: Deployment/%s generation %d observed %d, %d/%d available, conditions:", name, d.Name, d.Generation,
				d.Status.ObservedGeneration, d.Status.AvailableReplicas, d.Status.Replicas)
			for _, c := range d.Status.Conditions {
				fmt.Fprintf(&b, " %s=%s (%s)", c.Type, c.Status, c.Message)
			}
			b.WriteString("\n")
		}
		pods, err := r.kube.CoreV1().Pods(r.dest(name)).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, p := range pods.Items {
			fmt.Fprintf(&b, "%s: Pod/%s %s on %q\n", name, p.Name, p.Status.Phase, p.Spec.NodeName)
		}
	}
	return b.String()
}

// checkHistory checks each app has one history entry per revision it
// synced (syncs revisions, each once).
func (r *rig) checkHistory(syncs int) {
	r.t.Helper()
	for _, name := range allApps {
		app := &v1alpha1.Application{}
		if err := r.client.Get(context.Background(), client.ObjectKey{Namespace: r.ns, Name: name}, app); err != nil {
			r.t.Fatal(err)
		}
		if got := len(app.Status.History); got != syncs {
			var revs []string
			for _, h := range app.Status.History {
				revs = append(revs, h.Revision[:7])
			}
			r.t.Errorf("%s has %d history entries, want %d (one per revision): %v", name, got, syncs, revs)
		}
	}
}

func clientKey(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// newKubeClient is a client of the suite's cluster.
func newKubeClient(t *testing.T) client.Client {
	localcluster.Need(t)
	t.Helper()
	c, err := kube.NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
