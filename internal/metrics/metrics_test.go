package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// appList and clusterList stand in for the controller's caches.
type appList []*v1alpha1.Application

func (l appList) ListApplications() []*v1alpha1.Application { return l }

type clusterList []ClusterCount

func (l clusterList) ClusterObjectCounts() []ClusterCount { return l }

const inCluster = "https://kubernetes.default.svc"

func testApps() (guestbook, helm, leaving *v1alpha1.Application) {
	guestbook = &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "guestbook"},
		Spec: v1alpha1.ApplicationSpec{
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://GitHub.com/Org/Guestbook.git"},
			Destination: v1alpha1.ApplicationDestination{Server: inCluster, Namespace: "guestbook"},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
		},
		Status: v1alpha1.ApplicationStatus{
			Sync:   v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced},
			Health: v1alpha1.AppHealthStatus{Status: v1alpha1.HealthStatusHealthy},
			Conditions: []v1alpha1.ApplicationCondition{
				{Type: v1alpha1.ApplicationConditionSyncError, Message: "one"},
				{Type: v1alpha1.ApplicationConditionSharedResourceWarning, Message: "two"},
				{Type: v1alpha1.ApplicationConditionSyncError, Message: "three"},
			},
		},
	}
	disabled := false
	helm = &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "helm"},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "team",
			Sources:     v1alpha1.ApplicationSources{{RepoURL: "git@github.com:org/charts.git"}, {RepoURL: "https://example.com/values"}},
			Destination: v1alpha1.ApplicationDestination{Server: "https://10.0.0.1:6443", Namespace: "helm"},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Enabled: &disabled}},
		},
		// A dry-run sync requested, status never written yet.
		Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{DryRun: true}},
	}
	now := metav1.Now()
	leaving = &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "leaving", DeletionTimestamp: &now},
		Spec: v1alpha1.ApplicationSpec{
			Destination: v1alpha1.ApplicationDestination{Name: "prod"},
		},
		Status: v1alpha1.ApplicationStatus{
			Sync:   v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeOutOfSync},
			Health: v1alpha1.AppHealthStatus{Status: v1alpha1.HealthStatusMissing},
		},
	}
	return guestbook, helm, leaving
}

// fakeAPIServer answers like a Kubernetes API server, enough for the
// requests the test makes.
func fakeAPIServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/missing"):
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		case r.URL.Query().Get("watch") == "true":
			w.WriteHeader(http.StatusOK) // a watch that ends at once
		case r.URL.Path == "/api/v1/namespaces/x/configmaps/y":
			_, _ = io.WriteString(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"namespace":"x","name":"y"}}`)
		default:
			_, _ = io.WriteString(w, `{}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestScrape records a reconcile, syncs and Kubernetes requests made by a
// real client-go client, then scrapes /metrics over HTTP from Serve's
// server and compares every series.
func TestScrape(t *testing.T) {
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock = func() time.Time { return fixed }
	t.Cleanup(func() { clock = time.Now })

	guestbook, helm, leaving := testApps()
	m := New(appList{guestbook, helm, leaving}, clusterList{
		{Server: inCluster, Name: "in-cluster", Objects: 120, APIs: 42, SyncedAt: fixed.Add(-90*time.Second - 700*time.Millisecond),
			Version: "1.36", Connected: true, VersionKnown: true, Labels: map[string]string{"env": "prod", "team": "a"}},
		{Server: "https://10.0.0.1:6443", Name: "edge", Version: "1.35", VersionKnown: true}, // not synced yet, not answering
		{Server: inCluster, Objects: 1},                // a duplicate, ignored
		{Server: "https://10.0.0.2:6443", Name: "new"}, // not asked its version yet
	}, Options{ClusterLabels: []string{"env"}})
	started := metav1.NewTime(fixed.Add(-12 * time.Second))
	finished := metav1.NewTime(fixed)
	guestbook.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationSucceeded, StartedAt: started, FinishedAt: &finished}
	m.SetOrphanedResources(guestbook, 3)
	m.SetOrphanedResources(helm, -1) // not monitored
	gone := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "gone"}}
	m.SetOrphanedResources(gone, 5) // deleted since: no series
	deployments := m.ClusterEventCounter(inCluster, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	deployments()
	deployments()
	m.ClusterEventCounter(inCluster, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})()

	m.ObserveReconcile(guestbook, 1500*time.Millisecond)
	m.ObserveReconcile(guestbook, 250*time.Millisecond) // le="0.25" is inclusive
	m.ObserveReconcile(helm, 20*time.Second)

	m.IncSync(guestbook, v1alpha1.OperationSucceeded)
	m.IncSync(guestbook, v1alpha1.OperationSucceeded)
	m.IncSync(guestbook, v1alpha1.OperationRunning) // not completed: not counted
	m.IncSync(helm, v1alpha1.OperationFailed)

	api := fakeAPIServer(t)
	ctx := context.Background()
	cfg := &rest.Config{Host: api.URL}
	cfg.Wrap(m.WrapTransport(inCluster))
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := cs.CoreV1().ConfigMaps("x").Get(ctx, "y", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().Secrets("x").Get(ctx, "missing", metav1.GetOptions{}); err == nil {
		t.Fatal("getting the missing secret succeeded")
	}
	w, err := cs.CoreV1().ConfigMaps("x").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	patch := cs.CoreV1().RESTClient().Patch(types.MergePatchType).
		AbsPath("/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/guestbook/status").
		Body([]byte(`{"status":{}}`))
	if err := patch.Do(WithApplication(ctx, guestbook)).Error(); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("x").Get(WithApplication(ctx, helm), "y", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	// Without a server name the request's own scheme and host are the label.
	plain := &rest.Config{Host: api.URL}
	plain.Wrap(m.WrapTransport(""))
	cs2, err := kubernetes.NewForConfig(plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs2.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}

	sctx, stop := context.WithCancel(ctx)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- m.serve(sctx, ln) }()
	url := "http://" + ln.Addr().String() + Path

	want := `
# HELP argocd_app_info Information about application.
# TYPE argocd_app_info gauge
argocd_app_info{autosync_enabled="true",dest_namespace="guestbook",dest_server="https://kubernetes.default.svc",health_status="Healthy",name="guestbook",namespace="argocd",operation="",project="default",repo="https://github.com/org/guestbook",sync_status="Synced"} 1
argocd_app_info{autosync_enabled="false",dest_namespace="helm",dest_server="https://10.0.0.1:6443",health_status="Unknown",name="helm",namespace="argocd",operation="sync",project="team",repo="git@github.com/org/charts",sync_status="Unknown"} 1
argocd_app_info{autosync_enabled="false",dest_namespace="",dest_server="",health_status="Missing",name="leaving",namespace="other",operation="delete",project="default",repo="",sync_status="OutOfSync"} 1
# HELP argocd_app_condition Report application conditions.
# TYPE argocd_app_condition gauge
argocd_app_condition{condition="SyncError",name="guestbook",namespace="argocd",project="default"} 2
argocd_app_condition{condition="SharedResourceWarning",name="guestbook",namespace="argocd",project="default"} 1
# HELP argocd_app_orphaned_resources_count Number of orphaned resources per application
# TYPE argocd_app_orphaned_resources_count gauge
argocd_app_orphaned_resources_count{name="guestbook",namespace="argocd",project="default"} 3
argocd_app_orphaned_resources_count{name="helm",namespace="argocd",project="team"} 0
# HELP argocd_app_reconcile Application reconciliation performance in seconds.
# TYPE argocd_app_reconcile histogram
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="0.25"} 1
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="0.5"} 1
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="1"} 1
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="2"} 2
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="4"} 2
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="8"} 2
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="16"} 2
argocd_app_reconcile_bucket{dest_server="https://kubernetes.default.svc",namespace="argocd",le="+Inf"} 2
argocd_app_reconcile_sum{dest_server="https://kubernetes.default.svc",namespace="argocd"} 1.75
argocd_app_reconcile_count{dest_server="https://kubernetes.default.svc",namespace="argocd"} 2
argocd_app_reconcile_bucket{dest_server="https://10.0.0.1:6443",namespace="argocd",le="0.25"} 0
argocd_app_reconcile_bucket{dest_server="https://10.0.0.1:6443",namespace="argocd",le="0.5"} 0
argocd_app_reconcile_bucket{dest_server="https://10.0.0.1:6443",namespace="argocd",le="1"} 0
argocd_app_reconcile_bucket{dest_server="https://10.0.0.1:6443",namespace="argocd",le="2"} 0
argocd_app_reconcile_bucket{dest_server="https://10.0.0.1:6443",namespace="argocd",le="4"} 0
argocd_app_reconcile_bucket{dest_server="https://10.0.0.1:6443",namespace="argocd",le="8"} 0
argocd_app_reconcile_bucket{dest_server="https://10.0.0.1:6443",namespace="argocd",le="16"} 0
argocd_app_reconcile_bucket{dest_server="https://10.0.0.1:6443",namespace="argocd",le="+Inf"} 1
argocd_app_reconcile_sum{dest_server="https://10.0.0.1:6443",namespace="argocd"} 20
argocd_app_reconcile_count{dest_server="https://10.0.0.1:6443",namespace="argocd"} 1
# HELP argocd_app_sync_total Number of application syncs.
# TYPE argocd_app_sync_total counter
argocd_app_sync_total{dest_server="https://kubernetes.default.svc",dry_run="false",name="guestbook",namespace="argocd",phase="Succeeded",project="default"} 2
argocd_app_sync_total{dest_server="https://10.0.0.1:6443",dry_run="true",name="helm",namespace="argocd",phase="Failed",project="team"} 1
# HELP argocd_app_sync_duration_seconds_total Application sync performance in seconds total.
# TYPE argocd_app_sync_duration_seconds_total counter
argocd_app_sync_duration_seconds_total{dest_server="https://kubernetes.default.svc",name="guestbook",namespace="argocd",project="default"} 24
# HELP argocd_app_k8s_request_total Number of kubernetes requests executed during application reconciliation.
# TYPE argocd_app_k8s_request_total counter
argocd_app_k8s_request_total{dry_run="false",name="",namespace="",project="",resource_kind="configmaps",resource_namespace="x",response_code="200",server="https://kubernetes.default.svc",verb="Get"} 2
argocd_app_k8s_request_total{dry_run="false",name="",namespace="",project="",resource_kind="secrets",resource_namespace="x",response_code="404",server="https://kubernetes.default.svc",verb="Get"} 1
argocd_app_k8s_request_total{dry_run="false",name="",namespace="",project="",resource_kind="configmaps",resource_namespace="x",response_code="200",server="https://kubernetes.default.svc",verb="Watch"} 1
argocd_app_k8s_request_total{dry_run="false",name="guestbook",namespace="argocd",project="default",resource_kind="applications",resource_namespace="argocd",response_code="200",server="https://kubernetes.default.svc",verb="Patch"} 1
argocd_app_k8s_request_total{dry_run="true",name="helm",namespace="argocd",project="team",resource_kind="configmaps",resource_namespace="x",response_code="200",server="https://kubernetes.default.svc",verb="Get"} 1
argocd_app_k8s_request_total{dry_run="false",name="",namespace="",project="",resource_kind="namespaces",resource_namespace="",response_code="200",server="` + api.URL + `",verb="List"} 1
# HELP argocd_cluster_info Information about cluster.
# TYPE argocd_cluster_info gauge
argocd_cluster_info{k8s_version="1.36",name="in-cluster",server="https://kubernetes.default.svc"} 1
argocd_cluster_info{k8s_version="1.35",name="edge",server="https://10.0.0.1:6443"} 1
# HELP argocd_cluster_connection_status The k8s cluster current connection status.
# TYPE argocd_cluster_connection_status gauge
argocd_cluster_connection_status{k8s_version="1.36",server="https://kubernetes.default.svc"} 1
argocd_cluster_connection_status{k8s_version="1.35",server="https://10.0.0.1:6443"} 0
# HELP argocd_cluster_labels Argo Cluster labels converted to Prometheus labels
# TYPE argocd_cluster_labels gauge
argocd_cluster_labels{label_env="prod",name="in-cluster",server="https://kubernetes.default.svc"} 1
argocd_cluster_labels{label_env="",name="edge",server="https://10.0.0.1:6443"} 1
argocd_cluster_labels{label_env="",name="new",server="https://10.0.0.2:6443"} 1
# HELP argocd_cluster_api_resource_objects Number of k8s resource objects in the cache.
# TYPE argocd_cluster_api_resource_objects gauge
argocd_cluster_api_resource_objects{server="https://kubernetes.default.svc"} 120
argocd_cluster_api_resource_objects{server="https://10.0.0.1:6443"} 0
argocd_cluster_api_resource_objects{server="https://10.0.0.2:6443"} 0
# HELP argocd_cluster_api_resources Number of monitored kubernetes API resources.
# TYPE argocd_cluster_api_resources gauge
argocd_cluster_api_resources{server="https://kubernetes.default.svc"} 42
argocd_cluster_api_resources{server="https://10.0.0.1:6443"} 0
argocd_cluster_api_resources{server="https://10.0.0.2:6443"} 0
# HELP argocd_cluster_cache_age_seconds Cluster cache age in seconds.
# TYPE argocd_cluster_cache_age_seconds gauge
argocd_cluster_cache_age_seconds{server="https://kubernetes.default.svc"} 90
argocd_cluster_cache_age_seconds{server="https://10.0.0.1:6443"} -1
argocd_cluster_cache_age_seconds{server="https://10.0.0.2:6443"} -1
# HELP argocd_cluster_events_total Number of processes k8s resource events.
# TYPE argocd_cluster_events_total counter
argocd_cluster_events_total{group="apps",kind="Deployment",server="https://kubernetes.default.svc"} 2
argocd_cluster_events_total{group="",kind="ConfigMap",server="https://kubernetes.default.svc"} 1
`
	names := []string{
		"argocd_app_info", "argocd_app_condition", "argocd_app_orphaned_resources_count", "argocd_app_reconcile", "argocd_app_sync_total",
		"argocd_app_sync_duration_seconds_total", "argocd_app_k8s_request_total", "argocd_cluster_info", "argocd_cluster_connection_status",
		"argocd_cluster_labels", "argocd_cluster_api_resource_objects", "argocd_cluster_api_resources", "argocd_cluster_cache_age_seconds",
		"argocd_cluster_events_total",
	}
	if err := testutil.ScrapeAndCompare(url, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}

	// The whole page parses, and carries the Go and process collectors
	// and nothing this package does not define.
	families := scrape(t, url)
	// client-go's own request metrics count the test's client.
	var counted float64
	for _, m := range families["argocd_kubectl_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "host" && "http://"+l.GetValue() == api.URL {
				counted += m.GetCounter().GetValue()
			}
		}
	}
	if counted < 7 {
		t.Errorf("argocd_kubectl_requests_total counts %v requests to the API server, want at least 7", counted)
	}
	if families["argocd_kubectl_request_duration_seconds"] == nil {
		t.Error("no argocd_kubectl_request_duration_seconds")
	}
	for _, n := range append(names, "go_goroutines", "go_memstats_alloc_bytes", "process_start_time_seconds") {
		if families[n] == nil {
			t.Errorf("%s is missing from the scrape", n)
		}
	}
	for n := range families {
		if !strings.HasPrefix(n, "argocd_") && !strings.HasPrefix(n, "go_") && !strings.HasPrefix(n, "process_") {
			t.Errorf("unexpected metric %s", n)
		}
	}

	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("serve after its context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return after its context ended")
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the metrics server still answers after shutdown")
	}
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return families
}

// TestSyncDryRunFromOperationState: an automated sync has no app.operation;
// its dry run flag is read from status.operationState.
func TestSyncDryRunFromOperationState(t *testing.T) {
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "a"},
		Spec:       v1alpha1.ApplicationSpec{Destination: v1alpha1.ApplicationDestination{Server: inCluster}},
		Status: v1alpha1.ApplicationStatus{OperationState: &v1alpha1.OperationState{
			Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{DryRun: true}},
			Phase:     v1alpha1.OperationError,
		}},
	}
	m := New(nil, nil, Options{})
	m.IncSync(app, v1alpha1.OperationError)
	if got := m.syncs.value("argocd", "a", "default", inCluster, "Error", "true"); got != 1 {
		t.Errorf("argocd_app_sync_total{dry_run=\"true\",phase=\"Error\"} = %v, want 1", got)
	}
	if n := testutil.CollectAndCount(m.syncs); n != 1 {
		t.Errorf("%d sync series, want 1", n)
	}
}

// TestNilSources: without listers the app and cluster metrics are absent
// and the rest is still served.
func TestNilSources(t *testing.T) {
	srv := httptest.NewServer(New(nil, nil, Options{}).Handler())
	defer srv.Close()
	families := scrape(t, srv.URL)
	for _, n := range []string{"argocd_app_info", "argocd_app_condition", "argocd_cluster_api_resource_objects"} {
		if families[n] != nil {
			t.Errorf("%s present without a source", n)
		}
	}
	if families["go_goroutines"] == nil {
		t.Error("go_goroutines is missing")
	}
}

func TestServe(t *testing.T) {
	t.Run("stops with its context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- New(nil, nil, Options{}).Serve(ctx, "127.0.0.1:0") }()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve = %v, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return after its context ended")
		}
	})
	t.Run("address in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		err = New(nil, nil, Options{}).Serve(context.Background(), ln.Addr().String())
		var opErr *net.OpError
		if !errors.As(err, &opErr) || !strings.Contains(err.Error(), ln.Addr().String()) {
			t.Errorf("Serve on a busy address = %v, want a listen error naming %s", err, ln.Addr())
		}
	})
}

func TestRepoLabel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://GitHub.com/Org/Repo.git", "https://github.com/org/repo"},
		{" https://github.com/org/repo ", "https://github.com/org/repo"},
		{"git@github.com:org/repo.git", "git@github.com/org/repo"},
		{"ssh://git@github.com:2222/org/repo.git", "git@github.com:2222/org/repo"},
		{"https://user:secret@example.com/org/repo.git", "https://example.com/org/repo"},
		{"oci://registry.example.com/charts", "oci://registry.example.com/charts"},
		{"", ""},
	} {
		app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: tc.in}}}
		if got := repoLabel(app); got != tc.want {
			t.Errorf("repoLabel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func ExampleMetrics_WrapTransport() {
	m := New(nil, nil, Options{})
	cfg := &rest.Config{Host: "https://kubernetes.default.svc"}
	cfg.Wrap(m.WrapTransport(cfg.Host))
	fmt.Println(cfg.WrapTransport != nil)
	// Output: true
}

// TestInvalidLabelValues: a value that is not UTF-8 loses its own sample,
// never the scrape or the process.
func TestInvalidLabelValues(t *testing.T) {
	bad := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "bad\xff"}}
	good := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "good"}}
	m := New(appList{bad, good}, nil, Options{})
	rt := m.WrapTransport("https://c1")(failingTransport{})
	_, _ = rt.RoundTrip(httptest.NewRequest("GET", "https://c1/api/v1/namespaces/%FF/pods/p", nil))

	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	families := scrape(t, srv.URL)
	info := families["argocd_app_info"]
	if info == nil || len(info.GetMetric()) != 1 {
		t.Fatalf("argocd_app_info = %v, want the good Application's series only", info)
	}
	if families["argocd_app_k8s_request_total"] != nil {
		t.Error("a request with an invalid path was counted")
	}
}

// TestAppLabelsAndConditions: --metrics-application-labels adds
// argocd_app_labels with a label per Application label asked for ("" when
// an Application lacks it), and --metrics-application-conditions keeps
// only the condition types it names.
func TestAppLabelsAndConditions(t *testing.T) {
	guestbook, helm, _ := testApps()
	guestbook.Labels = map[string]string{"team": "web", "app.kubernetes.io/part-of": "shop"}
	m := New(appList{guestbook, helm}, nil, Options{AppLabels: []string{"team", "app.kubernetes.io/part-of"}, AppConditions: []string{"SyncError"}})
	page := scrapeOf(m)
	for _, want := range []string{
		`argocd_app_labels{label_app_kubernetes_io_part_of="shop",label_team="web",name="guestbook",namespace="argocd",project="default"} 1`,
		`argocd_app_labels{label_app_kubernetes_io_part_of="",label_team="",name="helm",namespace="argocd",project="team"} 1`,
		`argocd_app_condition{condition="SyncError",name="guestbook",namespace="argocd",project="default"} 2`,
	} {
		if !strings.Contains(page, want+"\n") {
			t.Errorf("missing %s", want)
		}
	}
	if strings.Contains(page, "SharedResourceWarning") {
		t.Error("a condition type not asked for is reported")
	}
	if strings.Contains(scrapeOf(New(appList{guestbook}, nil, Options{})), "argocd_app_labels") {
		t.Error("argocd_app_labels without labels asked for")
	}
}

// scrapeOf is m's metrics page.
func scrapeOf(m *Metrics) string {
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", Path, nil))
	return rec.Body.String()
}
