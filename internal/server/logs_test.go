package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestMaxPodLogsToRender: a request for the logs of more Pods than
// argocd-cm's server.maxPodLogsToRender allows is refused with Argo CD's
// message, before any log is read; within it the logs stream; a value
// that is not a number is named.
func TestMaxPodLogsToRender(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	dest := kubeCluster.NewNamespace(t)
	leaveWorkload(t, f.c, dest)
	rs := &appsv1.ReplicaSet{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "guestbook-ui-5d9f"}, rs); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"guestbook-ui-5d9f-x2", "guestbook-ui-5d9f-x3"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: dest, Labels: map[string]string{"app": "guestbook-ui"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ui", Image: "guestbook:v1"}}}}
		if err := f.c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://127.0.0.1:1/demo.git", Path: "guestbook"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	app.Status.Resources = []v1alpha1.ResourceStatus{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: dest, Name: "guestbook-ui"}}
	if err := f.c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	token := f.adminToken()
	logs := "/api/v1/applications/guestbook/logs?appNamespace=" + f.ns + "&namespace=" + dest + "&group=apps&kind=Deployment&resourceName=guestbook-ui&container=ui"
	for _, tc := range []struct {
		setting string
		code    int
		message string
	}{
		{"", http.StatusOK, ""}, // Argo CD's default, 10
		{"2", http.StatusBadRequest, "max pods to view logs are reached. Please provide more granular query"},
		{"3", http.StatusOK, ""},
		{"many", http.StatusInternalServerError, "server.maxPodLogsToRender"},
	} {
		data := map[string]string{}
		if tc.setting != "" {
			data["server.maxPodLogsToRender"] = tc.setting
		}
		if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: data}); err != nil {
			t.Fatal(err)
		}
		resp := f.send(ctx, "GET", logs, "", token)
		body := readAll(t, resp)
		if resp.StatusCode != tc.code || !strings.Contains(body, tc.message) {
			t.Errorf("server.maxPodLogsToRender %q: %d %s, want %d with %q", tc.setting, resp.StatusCode, body, tc.code, tc.message)
		}
	}
}
