package controller

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/logbuf"
)

// logBuffer collects a controller's log lines.
type logBuffer struct{ logbuf.Buffer }

// reconciled reports whether the log has a reconcile of app.
func (b *logBuffer) reconciled(app string) bool {
	return strings.Contains(b.String(), `"application":"`+app+`"`)
}

func logTo(b *logBuffer) *slog.Logger { return slog.New(slog.NewJSONHandler(b, nil)) }

// newApp returns an automated Application of project that deploys path
// of repoURL to dest.
func newApp(e *env, name, project, repoURL, path string, dest v1alpha1.ApplicationDestination) *v1alpha1.Application {
	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: v1alpha1.ApplicationSpec{
			Project: project, Destination: dest,
			Source:     &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: path},
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		},
	}
}

// create creates objects as a user would.
func (e *env) create(objs ...client.Object) {
	e.t.Helper()
	for _, o := range objs {
		if err := e.client.Create(context.Background(), o); err != nil {
			e.t.Fatal(err)
		}
	}
}

// cmApp creates an automated Application of the default project that
// deploys path of repoURL to dest.
func cmApp(t *testing.T, e *env, name, repoURL, path string, dest v1alpha1.ApplicationDestination) {
	t.Helper()
	e.create(newApp(e, name, "default", repoURL, path, dest))
}

// shardedControllers are two controller replicas sharing a control
// namespace, each logging to its own buffer, and a repository with
// two apps' manifests (paths a and b) to deploy into dest.
type shardedControllers struct {
	*env     // replica 0's
	ns, dest string
	logs     [2]logBuffer
	remote   *gitserver.Repo
}

func startShards(t *testing.T, sharding cluster.Sharding) *shardedControllers {
	t.Helper()
	localcluster.Need(t)
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	s := &shardedControllers{ns: testCluster.NewNamespace(t)}
	for shard := range 2 {
		e := startWith(t, s.ns, func(o *Options) {
			o.Replicas, o.Shard, o.Sharding, o.LeaderElection, o.Log = 2, shard, sharding, true, logTo(&s.logs[shard])
		})
		if shard == 0 {
			s.env = e
		}
	}
	s.dest = testCluster.NewNamespace(t)
	s.remote = gitserver.NewLocalRepo(t)
	s.remote.Commit(t, "c", map[string]string{
		"a/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"b/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	})
	return s
}

func TestShardsSplitClusters(t *testing.T) {
	s := startShards(t, cluster.ShardingLegacy)
	e, ns, dest, remote, logs := s.env, s.ns, s.dest, s.remote, &s.logs
	// Two names for the test cluster, pinned to different shards.
	for shard := range 2 {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", shard), Namespace: ns, Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster}},
			StringData: map[string]string{"name": fmt.Sprintf("c%d", shard), "server": testCluster.Config.Host, "shard": fmt.Sprint(shard),
				"config": `{"bearerToken":"` + testCluster.Config.BearerToken + `","tlsClientConfig":{"insecure":true}}`},
		}
		if err := e.client.Create(context.Background(), secret); err != nil {
			t.Fatal(err)
		}
	}
	cmApp(t, e, "on-shard-0", remote.URL, "a", v1alpha1.ApplicationDestination{Name: "c0", Namespace: dest})
	cmApp(t, e, "on-shard-1", remote.URL, "b", v1alpha1.ApplicationDestination{Name: "c1", Namespace: dest})
	e.waitSyncedHealthy("on-shard-0")
	e.waitSyncedHealthy("on-shard-1")
	// The log line follows the status write: wait for it.
	for shard := range 2 {
		mine := fmt.Sprintf("%s/on-shard-%d", ns, shard)
		e.eventually(fmt.Sprintf("shard %d logs its app", shard), func() string {
			if !logs[shard].reconciled(mine) {
				return "no reconcile of " + mine
			}
			return ""
		})
	}
	for shard := range 2 {
		if other := fmt.Sprintf("%s/on-shard-%d", ns, 1-shard); logs[shard].reconciled(other) {
			t.Errorf("shard %d reconciled the other shard's app", shard)
		}
	}
}

func TestStandbyTakesOver(t *testing.T) {
	localcluster.Need(t)
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	ns := testCluster.NewNamespace(t)
	var logs [2]logBuffer
	envs := make([]*env, 2)
	for i := range 2 {
		envs[i] = startWith(t, ns, func(o *Options) { o.LeaderElection, o.Log = true, logTo(&logs[i]) })
	}
	e := envs[0]
	dest := v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: testCluster.NewNamespace(t)}
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{
		"a/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"b/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	})
	cmApp(t, e, "first", remote.URL, "a", dest)
	e.waitSyncedHealthy("first")
	leader := -1
	e.eventually("a leader's reconcile logged", func() string {
		for i := range 2 {
			if logs[i].reconciled(ns + "/first") {
				leader = i
				return ""
			}
		}
		return "no reconcile logged"
	})
	if logs[1-leader].reconciled(ns + "/first") {
		t.Fatal("both replicas reconciled: no leader election")
	}
	envs[leader].stop()
	cmApp(t, e, "second", remote.URL, "b", dest)
	e.waitSyncedHealthy("second")
	e.eventually("the standby took over", func() string {
		if !logs[1-leader].reconciled(ns + "/second") {
			return "no reconcile of second by the standby"
		}
		return ""
	})
}

// TestRoundRobinShards: with the round-robin algorithm the clusters,
// sorted by their Secrets' UIDs after in-cluster, go to the replicas in
// turn, as Argo CD deals them; each replica reconciles only its
// clusters' Applications.
func TestRoundRobinShards(t *testing.T) {
	s := startShards(t, cluster.ShardingRoundRobin)
	e, ns, dest, remote, logs := s.env, s.ns, s.dest, s.remote, &s.logs
	// Two names of the test cluster under two URLs, neither pinned.
	host := testCluster.Config.Host
	servers := []string{host, strings.Replace(host, "127.0.0.1", "localhost", 1)}
	uids := make([]string, 2)
	for i, server := range servers {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("rr%d", i), Namespace: ns, Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster}},
			StringData: map[string]string{"name": fmt.Sprintf("rr%d", i), "server": server,
				"config": `{"bearerToken":"` + testCluster.Config.BearerToken + `","tlsClientConfig":{"insecure":true}}`},
		}
		if err := e.client.Create(context.Background(), secret); err != nil {
			t.Fatal(err)
		}
		uids[i] = string(secret.UID)
	}
	// In-cluster has rank 0 (shard 0); the smaller UID rank 1 (shard 1),
	// the other rank 2 (shard 0).
	shardOf := [2]int{1, 0}
	if uids[1] < uids[0] {
		shardOf = [2]int{0, 1}
	}
	cmApp(t, e, "rr-0", remote.URL, "a", v1alpha1.ApplicationDestination{Name: "rr0", Namespace: dest})
	cmApp(t, e, "rr-1", remote.URL, "b", v1alpha1.ApplicationDestination{Name: "rr1", Namespace: dest})
	e.waitSyncedHealthy("rr-0")
	e.waitSyncedHealthy("rr-1")
	for i := range 2 {
		app := fmt.Sprintf("%s/rr-%d", ns, i)
		owner := shardOf[i]
		e.eventually(fmt.Sprintf("shard %d logs %s", owner, app), func() string {
			if !logs[owner].reconciled(app) {
				return "no reconcile of " + app
			}
			return ""
		})
		if logs[1-owner].reconciled(app) {
			t.Errorf("shard %d reconciled %s, which round-robin gives shard %d", 1-owner, app, owner)
		}
	}
}
