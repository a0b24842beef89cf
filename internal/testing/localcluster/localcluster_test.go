package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/capstan-cd/capstan/internal/testing/eventually"
)

// cluster runs workloads: controller-manager, scheduler and a kwok node.
var cluster *Cluster

func TestMain(m *testing.M) {
	os.Exit(RunTests(m, Options{Workloads: true}, &cluster))
}

func TestDeploymentBecomesAvailable(t *testing.T) {
	Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := cluster.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.NewNamespace(t)
	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	eventually.Within(t, eventually.Options{Timeout: 2 * time.Minute, Interval: 200 * time.Millisecond}, "the deployment Available", func() string {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !available(d) || d.Status.AvailableReplicas != 2 {
			return fmt.Sprintf("status %+v", d.Status)
		}
		return ""
	})

	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == cluster.opts.NodeName {
			running++
		}
	}
	if running != 2 {
		t.Errorf("%d pods running on %s, want 2", running, cluster.opts.NodeName)
	}
}

func available(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestRBACRejectsAnonymousAndLimitsComponents(t *testing.T) {
	Need(t)
	anon := rest.AnonymousClientConfig(cluster.Config)
	cs := kubernetes.NewForConfigOrDie(anon)
	_, err := cs.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{})
	if err == nil {
		t.Fatal("anonymous request listed secrets")
	}

	// The scheduler's identity may read pods but not secrets.
	sched := kubernetes.NewForConfigOrDie(cluster.restConfig(cluster.Config.Host, "kube-scheduler"))
	if _, err := sched.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{Limit: 1}); err != nil {
		t.Errorf("scheduler cannot list pods: %v", err)
	}
	_, err = sched.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("scheduler listing secrets: got %v, want forbidden", err)
	}
}

func TestStopLeavesNothingBehind(t *testing.T) {
	c, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	pids, dir := c.Pids(), c.Dir
	if len(pids) != 2 {
		t.Fatalf("API-only cluster runs %d processes, want 2 (etcd, kube-apiserver)", len(pids))
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after Stop (kill 0: %v)", pid, err)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s still exists after Stop", dir)
	}
	resp, err := http.Get(strings.Replace(c.Config.Host, "https", "http", 1))
	if err == nil {
		_ = resp.Body.Close()
		t.Error("API server port still answers after Stop")
	}
}

func TestMissingBinariesNameTheMakeTarget(t *testing.T) {
	_, err := Start(context.Background(), Options{BinDir: t.TempDir()})
	if err == nil {
		t.Fatal("Start succeeded without binaries")
	}
	if !strings.Contains(err.Error(), "make kube") {
		t.Errorf("error %q does not name the make target", err)
	}
}

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc", 5, "a\nb\nc"},
		{"", 3, ""},
		{"only\n", 1, "only"},
	} {
		if got := string(lastLines([]byte(tc.in), tc.n)); got != tc.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestPodLogs: the fake node serves every container's log (PodLogLines)
// through the API server, as a kubelet would.
func TestPodLogs(t *testing.T) {
	Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := cluster.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.NewNamespace(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "talker", Namespace: ns}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "talker:1"}}}}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "talker", metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the pod never ran: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	data, err := cs.CoreV1().Pods(ns).GetLogs("talker", &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	if want := strings.Join(PodLogLines, "\n") + "\n"; err != nil || string(data) != want {
		t.Errorf("logs: %q, %v; want %q", data, err, want)
	}
}
