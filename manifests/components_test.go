package manifests_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iuv1 "github.com/capstan-cd/capstan/api/imageupdater/v1alpha1"
	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo/cache"
	"github.com/capstan-cd/capstan/internal/testing/dexserver"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/loopback"
	"github.com/capstan-cd/capstan/internal/testing/registryserver"
)

// demoApps are the apps of examples/, as make run deploys them.
var demoApps = []string{"guestbook", "kustomize-guestbook", "helm-guestbook"}

// TestComponentsRunAsTheManifestsSay installs install.yaml into namespace
// argocd and runs every workload of it as its pod would run (see kubelet):
// Redis with the password its init container made, the repo server, the
// controller and the API server, each with its own ServiceAccount's token,
// and a config management plugin sidecar added to the repo server as Argo
// CD's documentation shows. The demo apps must sync and turn Healthy
// through them, an app of the plugin must sync what the sidecar printed,
// the API must answer over TLS, the repo server must be reached over TLS,
// and Redis must hold the manifest cache behind its password. A permission
// or a setting the manifests forget fails here.
func TestComponentsRunAsTheManifestsSay(t *testing.T) {
	localcluster.Need(t)
	const ns = "argocd"
	createNamespace(t, cluster, ns)
	objs := withUpdaterInterval(t, addPluginSidecar(t, readObjects(t, "install.yaml")), "5s")
	apply(t, cluster, objs, ns)
	in := runInstall(t, cluster, objs, ns)
	c := in.syncDemo(t, cluster, ns)

	t.Run("the API answers over TLS", func(t *testing.T) {
		checkAPI(t, in.ip("argocd-server"), in.adminPassword(t, ns), len(demoApps))
	})
	t.Run("the repo server serves TLS", func(t *testing.T) {
		conn, err := tls.Dial("tcp", in.ip("argocd-repo-server")+":8081", &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
		if err != nil {
			t.Fatalf("TLS handshake with the repo server: %v", err)
		}
		defer conn.Close()
		if names := conn.ConnectionState().PeerCertificates[0].DNSNames; !contains(names, "argocd-repo-server."+ns+".svc") {
			t.Errorf("the repo server's certificate names %v", names)
		}
	})
	t.Run("the controller runs in its pod, by its in-cluster configuration", func(t *testing.T) {
		if !inPodNamespaces() {
			t.Skip("pods run without namespaces of their own, with a kubeconfig")
		}
		// Its Lease names its host: the pod's name, from which a
		// StatefulSet replica takes its shard.
		lease, err := in.cs.CoordinationV1().Leases(ns).Get(context.Background(), "capstan-application-controller", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if holder := *lease.Spec.HolderIdentity; !strings.HasPrefix(holder, "argocd-application-controller-0_") {
			t.Errorf("the controller's Lease is held by %q, not by pod argocd-application-controller-0", holder)
		}
	})
	t.Run("a config management plugin sidecar, added as Argo CD documents, renders an app", func(t *testing.T) {
		checkPluginApp(t, c, ns)
	})
	t.Run("the repo server inflates a kustomization's helmCharts with its own Helm", func(t *testing.T) {
		checkKustomizeHelm(t, c, in.cs, ns)
	})
	t.Run("ApplicationSets generate Applications from Git through the repo server", func(t *testing.T) {
		checkAppSet(t, c, ns)
	})
	t.Run("the notifications controller tells a webhook about a sync, once", func(t *testing.T) {
		checkNotification(t, c, ns)
	})
	t.Run("the image updater writes a registry's newest tag to an Application", func(t *testing.T) {
		checkImageUpdater(t, c, ns)
		checkProbes(t, objs, "argocd-image-updater-controller", in.ip("argocd-image-updater-controller"))
	})
	t.Run("users log in through Dex", func(t *testing.T) {
		checkDexLogin(t, c, ns, in.ip("argocd-server"))
	})
	t.Run("Redis holds the cache behind its password", func(t *testing.T) {
		password := checkRedis(t, in.cs, ns, in.ip("argocd-redis")+":6379")
		for name, p := range in.pods {
			for c, path := range p.logs {
				if data, _ := os.ReadFile(path); bytes.Contains(data, []byte(password)) {
					t.Errorf("%s/%s logs the Redis password", name, c)
				}
			}
		}
	})
	if t.Failed() || os.Getenv("DUMP") != "" {
		in.dumpLogs(t)
	}
}

// install is Capstan's install running on a cluster, one process per
// container of each replica of its workloads.
type install struct {
	cs kubernetes.Interface
	// ips are the addresses of each workload's pods (its Service's
	// endpoints), in order of their ordinals.
	ips  map[string][]string
	pods map[string]*pod // by pod name
}

// ip is the address of workload's first pod.
func (in *install) ip(workload string) string { return in.ips[workload][0] }

// workloads are the install's Deployments and StatefulSets, in the order
// they are started.
var workloads = []string{"argocd-redis", "argocd-repo-server", "argocd-application-controller", "argocd-applicationset-controller",
	"argocd-notifications-controller", "argocd-dex-server", "argocd-server", "argocd-image-updater-controller"}

// runInstall runs every replica of every workload of objs (applied to cl
// in namespace ns) as its pod would run (see kubelet) until the test ends.
func runInstall(t *testing.T, cl *localcluster.Cluster, objs []*unstructured.Unstructured, ns string) *install {
	t.Helper()
	capstan := buildCapstan(t)
	in := &install{cs: kubernetes.NewForConfigOrDie(cl.Config), ips: map[string][]string{}, pods: map[string]*pod{}}
	specs := map[string]corev1.PodSpec{}
	for _, name := range workloads {
		spec, replicas, ok := podSpec(t, objs, name)
		if !ok {
			continue
		}
		specs[name] = spec
		for range replicas {
			in.ips[name] = append(in.ips[name], loopback.Address()) // the pod's IP
		}
	}
	// No cluster DNS here: the Services' names become their first pod's
	// address in argocd-cmd-params-cm, as a user would point components at
	// hosts.
	setParams(t, in.cs, ns, map[string]string{
		"redis.server":      in.ip("argocd-redis") + ":6379",
		"repo.server":       in.ip("argocd-repo-server") + ":8081",
		"server.dex.server": in.ip("argocd-dex-server") + ":5556",
	})
	k := &kubelet{config: cl.Config, cs: in.cs, namespace: ns, programs: map[string]string{
		"argocd": capstan, "argocd-server": capstan, "argocd-repo-server": capstan, "argocd-application-controller": capstan,
		"argocd-dex": capstan, "argocd-applicationset-controller": capstan, "argocd-notifications": capstan, "argocd-image-updater": capstan,
		"redis": "redis-server",
		"sh":    "/bin/sh",
	}, path: []string{filepath.Dir(dexserver.Binary(t))}, image: map[string]string{"/usr/local/bin/capstan": capstan}}
	for _, name := range workloads {
		for i, ip := range in.ips[name] {
			pod := fmt.Sprintf("%s-%d", name, i) // a StatefulSet's pod names; for a Deployment's any do
			in.pods[pod] = k.start(t, pod, ip, specs[name])
		}
	}
	return in
}

// syncDemo deploys the demo apps (see deployDemo) and waits for them to be
// Synced and Healthy, ending the test with the containers' logs if they
// do not get there. It returns the client it used.
func (in *install) syncDemo(t *testing.T, cl *localcluster.Cluster, ns string) client.Client {
	t.Helper()
	c, err := kube.NewClient(cl.Config)
	if err != nil {
		t.Fatal(err)
	}
	deployDemo(t, c, ns)
	synced := false
	defer func() {
		if !synced {
			in.dumpLogs(t) // why the apps did not get there
		}
	}()
	waitSyncedHealthy(t, c, ns, 3*time.Minute)
	synced = true
	return c
}

// adminPassword is the password the API server wrote at its first start.
func (in *install) adminPassword(t *testing.T, ns string) string {
	t.Helper()
	s, err := in.cs.CoreV1().Secrets(ns).Get(context.Background(), "argocd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(s.Data["password"])
}

// dumpLogs logs the end of every container's log.
func (in *install) dumpLogs(t *testing.T) {
	for name, p := range in.pods {
		for c, path := range p.logs {
			t.Logf("== %s/%s\n%s", name, c, readLog(path))
		}
	}
}

// buildCapstan builds the capstan binary the pods run.
func buildCapstan(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "capstan")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/capstan").CombinedOutput(); err != nil {
		t.Fatalf("building capstan: %v\n%s", err, out)
	}
	return bin
}

// createNamespace creates ns on cl, unless it is there.
func createNamespace(t *testing.T, cl *localcluster.Cluster, ns string) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cl.Config)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// setParams merges data into argocd-cmd-params-cm.
func setParams(t *testing.T, cs kubernetes.Interface, ns string, data map[string]string) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"data": data})
	if _, err := cs.CoreV1().ConfigMaps(ns).Patch(context.Background(), "argocd-cmd-params-cm", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podSpec returns the pod template and replicas of the Deployment or
// StatefulSet name, if objs have it.
func podSpec(t *testing.T, objs []*unstructured.Unstructured, name string) (corev1.PodSpec, int, bool) {
	t.Helper()
	for _, o := range objs {
		if o.GetName() != name {
			continue
		}
		switch o.GetKind() {
		case "Deployment":
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
				t.Fatal(err)
			}
			return d.Spec.Template.Spec, int(ptr.Deref(d.Spec.Replicas, 1)), true
		case "StatefulSet":
			var s appsv1.StatefulSet
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &s); err != nil {
				t.Fatal(err)
			}
			return s.Spec.Template.Spec, int(ptr.Deref(s.Spec.Replicas, 1)), true
		}
	}
	return corev1.PodSpec{}, 0, false
}

// deployDemo publishes examples/ in a Git repository that needs
// credentials, registers it in a repository Secret and creates an
// Application per demo app, as make run does.
func deployDemo(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "demo")
	files := map[string]string{}
	for _, app := range demoApps {
		root := filepath.Join("..", "examples", app)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			rel, _ := filepath.Rel(filepath.Join("..", "examples"), path)
			files[filepath.ToSlash(rel)] = string(data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A kustomization inflating the Helm demo's chart, for checkKustomizeHelm.
	files["kustomize-helm/kustomization.yaml"] = "helmGlobals: {chartHome: ..}\nhelmCharts: [{name: helm-guestbook, releaseName: kh}]\n"
	remote.Commit(t, "demo apps", files)
	if err := c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-repo", Namespace: ns, Labels: map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepository}},
		StringData: map[string]string{"url": remote.URL, "username": srv.Username, "password": srv.Password},
	}); err != nil {
		t.Fatal(err)
	}
	for _, app := range demoApps {
		a := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, TargetRevision: "HEAD", Path: app},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: app},
				SyncPolicy: &v1alpha1.SyncPolicy{
					Automated:   &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true},
					SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true"},
				},
			},
		}
		if err := c.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
}

// checkKustomizeHelm turns on Helm for Kustomize in argocd-cm, as Argo CD
// users do, and syncs a kustomization inflating the Helm demo's chart:
// the repo server's render worker runs the program as Kustomize's helm.
func checkKustomizeHelm(t *testing.T, c client.Client, cs kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	patch := []byte(`{"data":{"kustomize.buildOptions":"--enable-helm --load-restrictor LoadRestrictionsNone"}}`)
	if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "argocd-cm", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	guestbook := &v1alpha1.Application{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "guestbook"}, guestbook); err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "kustomize-helm", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: guestbook.Spec.Source.RepoURL, TargetRevision: "HEAD", Path: "kustomize-helm"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "kustomize-helm"},
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{},
				SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true"}},
		},
	}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	eventually.Within(t, eventually.Options{Timeout: 2 * time.Minute, Interval: 500 * time.Millisecond}, "the Deployment from the chart", func() string {
		_, err := cs.AppsV1().Deployments("kustomize-helm").Get(ctx, "kh", metav1.GetOptions{})
		if err == nil {
			return ""
		}
		_ = c.Get(ctx, client.ObjectKeyFromObject(app), app)
		return fmt.Sprintf("%v; the app's conditions: %+v", err, app.Status.Conditions)
	})
}

// checkAppSet creates an ApplicationSet whose Git generator lists the
// demo repository's directories (a private repository, read by the repo
// server with the repository Secret's credentials) and waits for the
// Applications it generates.
func checkAppSet(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	guestbook := &v1alpha1.Application{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "guestbook"}, guestbook); err != nil {
		t.Fatal(err)
	}
	repoURL := guestbook.Spec.Source.RepoURL
	as := &v1alpha1.ApplicationSet{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-set", Namespace: ns},
		Spec: v1alpha1.ApplicationSetSpec{
			Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
				Git: &v1alpha1.GitGenerator{RepoURL: repoURL, Revision: "HEAD", Directories: []v1alpha1.GitDirectoryGeneratorItem{{Path: "*guestbook"}}},
			}}},
			Template: v1alpha1.ApplicationSetTemplate{
				ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "set-{{path.basename}}"},
				Spec: v1alpha1.ApplicationSpec{Project: "default",
					Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: "{{path}}", TargetRevision: "HEAD"},
					Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "set-{{path.basename}}"}},
			},
		},
	}
	if err := c.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"set-guestbook": true, "set-helm-guestbook": true, "set-kustomize-guestbook": true}
	eventually.Within(t, eventually.Options{Interval: 500 * time.Millisecond}, "the generated Applications", func() string {
		var list v1alpha1.ApplicationList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, a := range list.Items {
			if want[a.Name] && len(a.OwnerReferences) == 1 && a.OwnerReferences[0].Name == "demo-set" {
				found++
			}
		}
		if found == len(want) {
			return ""
		}
		got := &v1alpha1.ApplicationSet{}
		_ = c.Get(ctx, client.ObjectKeyFromObject(as), got)
		return fmt.Sprintf("%d of %d; conditions %+v", found, len(want), got.Status.Conditions)
	})
}

// waitSyncedHealthy waits for every demo app to be Synced and Healthy.
func waitSyncedHealthy(t *testing.T, c client.Client, ns string, timeout time.Duration) {
	t.Helper()
	eventually.Within(t, eventually.Options{Timeout: timeout, Interval: time.Second}, "the demo apps Synced and Healthy", func() string {
		var states []string
		for _, name := range demoApps {
			var a v1alpha1.Application
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &a); err != nil {
				t.Fatal(err)
			}
			if a.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || a.Status.Health.Status != "Healthy" {
				msg := ""
				for _, cond := range a.Status.Conditions {
					msg += " " + string(cond.Type) + ": " + cond.Message
				}
				states = append(states, name+" "+string(a.Status.Sync.Status)+"/"+string(a.Status.Health.Status)+msg)
			}
		}
		return strings.Join(states, "; ")
	})
}

// checkAPI logs in as admin with password and lists wantApps apps over
// HTTPS.
func checkAPI(t *testing.T, ip, password string, wantApps int) {
	t.Helper()
	httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	base := "https://" + net.JoinHostPort(ip, "8080")
	body, _ := json.Marshal(map[string]string{"username": "admin", "password": password})
	resp, err := httpc.Post(base+"/api/v1/session", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var session struct{ Token string }
	err = json.NewDecoder(resp.Body).Decode(&session)
	_ = resp.Body.Close()
	if err != nil || resp.TLS == nil || session.Token == "" {
		t.Fatalf("login over %s: TLS %v, %s, %v", base, resp.TLS != nil, resp.Status, err)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/applications", nil)
	req.Header.Set("Authorization", "Bearer "+session.Token)
	resp, err = httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Items []v1alpha1.Application `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Items) != wantApps {
		t.Errorf("GET /api/v1/applications: %s, %d apps, %v", resp.Status, len(list.Items), err)
	}
}

// checkRedis checks the cache is in Redis, and that Redis wants the
// password the init container put in the argocd-redis Secret, which it
// returns.
func checkRedis(t *testing.T, cs kubernetes.Interface, ns, addr string) string {
	t.Helper()
	ctx := context.Background()
	s, err := cs.CoreV1().Secrets(ns).Get(ctx, "argocd-redis", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cache.NewRedis(ctx, cache.RedisOptions{Addr: addr}); err == nil {
		t.Error("Redis answered without the password")
	}
	rc, err := cache.NewRedis(ctx, cache.RedisOptions{Addr: addr, Password: string(s.Data["auth"])})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if n, err := rc.Keys(ctx); err != nil || n == 0 {
		t.Errorf("Redis holds %d keys (%v), want the demo apps' manifests", n, err)
	}
	return string(s.Data["auth"])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkDexLogin configures SSO through the bundled Dex (argocd-cm's url
// and a dex.config with Dex's mock connector, which logs every browser in
// as one user) and logs in as a browser does: through the API server's
// /auth/login, Dex behind /api/dex, and back with a session cookie that
// the API accepts.
func checkDexLogin(t *testing.T, c client.Client, ns, serverIP string) {
	t.Helper()
	ctx := context.Background()
	base := "https://" + net.JoinHostPort(serverIP, "8080")
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "argocd-cm"}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["url"] = base
	cm.Data["dex.config"] = "logger: {level: error}\nconnectors:\n- {type: mockCallback, id: mock, name: Mock}\n"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			if req.URL.Path == "/applications" {
				return http.ErrUseLastResponse // back home: logged in
			}
			return nil
		}}
	// rundex sees the new dex.config within seconds and starts Dex.
	var token string
	eventually.Within(t, eventually.Options{Interval: time.Second}, "a session after logging in through Dex", func() string {
		resp, err := browser.Get(base + "/auth/login?return_url=/applications")
		if err != nil {
			return err.Error()
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		u, _ := url.Parse(base)
		for _, ck := range jar.Cookies(u) {
			if ck.Name == "argocd.token" {
				token = ck.Value
			}
		}
		if token == "" {
			return resp.Status + " " + string(body)
		}
		return ""
	})
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/session/userinfo", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		LoggedIn bool   `json:"loggedIn"`
		Username string `json:"username"`
		Iss      string `json:"iss"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || !info.LoggedIn || info.Username != dexserver.Email || info.Iss != base+"/api/dex" {
		t.Errorf("userinfo after logging in through Dex: %+v, %v", info, err)
	}
}

// checkNotification configures a webhook service, a trigger and a
// template in argocd-notifications-cm and subscribes the synced guestbook
// app to it: the notifications controller's pod must POST the synced
// commit's message (read through the repo server over TLS) to the
// webhook, once.
func checkNotification(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var got []string
	hook := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.Path+" "+string(body))
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "argocd-notifications-cm"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{
		"service.webhook.hook": "url: " + hook.URL + "\n",
		"trigger.on-sync-succeeded": "- when: app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']\n" +
			"  oncePer: app.status.operationState?.syncResult?.revision\n  send: [synced]\n",
		"template.synced": "webhook:\n  hook:\n    method: POST\n    path: /{{.app.metadata.name}}\n" +
			"    body: '{{(call .repo.GetCommitMetadata .app.status.sync.revision).Message}}'\n",
	}
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "guestbook"}, app); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(app.DeepCopy())
	metav1.SetMetaDataAnnotation(&app.ObjectMeta, "notifications.argoproj.io/subscribe.on-sync-succeeded.hook", "")
	if err := c.Patch(ctx, app, patch); err != nil {
		t.Fatal(err)
	}
	calls := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
	eventually.True(t, "the webhook called", func() bool { return len(calls()) > 0 })
	time.Sleep(3 * time.Second) // a second delivery would come by now
	if c := calls(); len(c) != 1 || c[0] != "/guestbook demo apps" {
		t.Fatalf("the webhook got %q, want one call with the commit's message", c)
	}
	// What was sent is kept on the Application, as Argo CD keeps it.
	if err := c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
		t.Fatal(err)
	}
	if notified := app.Annotations["notified.notifications.argoproj.io"]; !strings.Contains(notified, ":on-sync-succeeded:[0].") {
		t.Errorf("notified annotation %q", notified)
	}
}

// withUpdaterInterval has the image updater check images every interval
// instead of every two minutes, as a user would with --interval.
func withUpdaterInterval(t *testing.T, objs []*unstructured.Unstructured, interval string) []*unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Deployment" || o.GetName() != "argocd-image-updater-controller" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		c := containers[0].(map[string]any)
		c["args"] = append(c["args"].([]any), "--interval="+interval)
		if err := unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
		return objs
	}
	t.Fatal("the install has no image updater")
	return nil
}

// checkImageUpdater annotates the Kustomize demo app with an image of a
// registry the updater reaches with credentials from a Secret, as
// registries.conf says, and waits for the registry's newest tag in the
// app's Kustomize images (argocd write-back).
func checkImageUpdater(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	reg := registryserver.Start(t)
	reg.PushImage(t, "team/guestbook", time.Now().Add(-time.Hour), "1.0.0")
	reg.PushImage(t, "team/guestbook", time.Now(), "1.1.0")
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "test-registry", Namespace: ns},
		StringData: map[string]string{"creds": reg.Username + ":" + reg.Password}}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "argocd-image-updater-config"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"registries.conf": fmt.Sprintf("registries:\n- name: test\n  prefix: %s\n  api_url: http://%s\n  insecure: yes\n  credentials: secret:%s/test-registry#creds\n",
		reg.Host, reg.Host, ns)}
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kustomize-guestbook"}, app); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(app.DeepCopy())
	metav1.SetMetaDataAnnotation(&app.ObjectMeta, "argocd-image-updater.argoproj.io/image-list", "gb="+reg.Host+"/team/guestbook")
	metav1.SetMetaDataAnnotation(&app.ObjectMeta, "argocd-image-updater.argoproj.io/gb.force-update", "true")
	if err := c.Patch(ctx, app, patch); err != nil {
		t.Fatal(err)
	}
	waitImage := func(want string) {
		t.Helper()
		eventually.String(t, "the newest tag in the app's Kustomize images", func() string {
			if err := c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
				return err.Error()
			}
			if k := app.Spec.Source.Kustomize; k != nil {
				for _, img := range k.Images {
					if strings.HasSuffix(string(img), want) {
						return ""
					}
				}
				return fmt.Sprintf("images %v", k.Images)
			}
			return "no Kustomize images"
		})
	}
	waitImage(reg.Host + "/team/guestbook:1.1.0")

	// An ImageUpdater takes over (the install's Role lets the updater
	// read it and write its status): the next version comes through it.
	reg.PushImage(t, "team/guestbook", time.Now().Add(time.Minute), "1.2.0")
	force := true
	iu := &iuv1.ImageUpdater{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: ns}, Spec: iuv1.ImageUpdaterSpec{
		ApplicationRefs: []iuv1.ApplicationRef{{NamePattern: "kustomize-guestbook", Images: []iuv1.ImageConfig{{Alias: "gb", ImageName: reg.Host + "/team/guestbook",
			CommonUpdateSettings: &iuv1.CommonUpdateSettings{ForceUpdate: &force}}}}}}}
	if err := c.Create(ctx, iu); err != nil {
		t.Fatal(err)
	}
	waitImage(reg.Host + "/team/guestbook:1.2.0")
	eventually.String(t, "the ImageUpdater's status", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(iu), iu); err != nil {
			return err.Error()
		}
		if s := iu.Status; s.ApplicationsMatched != 1 || len(s.RecentUpdates) == 0 {
			return fmt.Sprintf("status %+v", s)
		}
		return ""
	})
}

// checkProbes asks a workload's HTTP probes, as its manifest declares
// them, at the workload's address: each must answer 200.
func checkProbes(t *testing.T, objs []*unstructured.Unstructured, workload, ip string) {
	t.Helper()
	for _, o := range objs {
		if o.GetName() != workload || (o.GetKind() != "Deployment" && o.GetKind() != "StatefulSet") {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		probes := 0
		for _, c := range containers {
			for _, kind := range []string{"livenessProbe", "readinessProbe"} {
				path, ok, _ := unstructured.NestedString(c.(map[string]any), kind, "httpGet", "path")
				port, _, _ := unstructured.NestedFieldNoCopy(c.(map[string]any), kind, "httpGet", "port")
				if !ok {
					continue
				}
				probes++
				url := fmt.Sprintf("http://%s:%v%s", ip, port, path)
				resp, err := http.Get(url)
				if err != nil {
					t.Errorf("%s %s: %v", workload, kind, err)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s %s %s: %s", workload, kind, url, resp.Status)
				}
			}
		}
		if probes == 0 {
			t.Errorf("%s declares no HTTP probe", workload)
		}
	}
}
