package manifests_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
)

// greeterPlugin is a config management plugin's plugin.yaml, in the
// ConfigMap a user mounts into its sidecar.
const greeterPlugin = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: greeter
spec:
  version: v1
  generate:
    command: [sh, -c]
    args:
      - |
        cat <<END
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: greeting
        data:
          app: "$ARGOCD_APP_NAME"
          audience: "$ARGOCD_ENV_AUDIENCE"
          files: "$(ls | wc -l | tr -d ' ')"
        END
`

// addPluginSidecar adds a plugin sidecar to the repo server's Deployment
// in objs exactly as Argo CD's documentation tells users to: the
// argocd-cmp-server program the install's copyutil init container puts in
// the var-files volume, the shared plugins volume, the plugin.yaml from a
// ConfigMap (appended to objs), a /tmp of its own.
func addPluginSidecar(t *testing.T, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Deployment" || o.GetName() != "argocd-repo-server" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		volumes, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "volumes")
		sidecar := corev1.Container{
			Name: "greeter", Image: "busybox", Command: []string{"/var/run/argocd/argocd-cmp-server"},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "var-files", MountPath: "/var/run/argocd"},
				{Name: "plugins", MountPath: "/home/argocd/cmp-server/plugins"},
				{Name: "greeter-plugin", MountPath: "/home/argocd/cmp-server/config/plugin.yaml", SubPath: "plugin.yaml"},
				{Name: "cmp-tmp", MountPath: "/tmp"},
			},
		}
		added := []corev1.Volume{
			{Name: "greeter-plugin", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "greeter-plugin"}}}},
			{Name: "cmp-tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}
		containers = append(containers, toMap(t, &sidecar))
		for _, v := range added {
			volumes = append(volumes, toMap(t, &v))
		}
		if err := unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedSlice(o.Object, volumes, "spec", "template", "spec", "volumes"); err != nil {
			t.Fatal(err)
		}
		cm := toMap(t, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "greeter-plugin"}, Data: map[string]string{"plugin.yaml": greeterPlugin}})
		return append(objs, &unstructured.Unstructured{Object: cm})
	}
	t.Fatal("install.yaml has no argocd-repo-server Deployment")
	return nil
}

func toMap(t *testing.T, v any) map[string]any {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkPluginApp creates an Application naming the plugin, from the demo
// repository, and waits for the ConfigMap the sidecar printed.
func checkPluginApp(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	guestbook := &v1alpha1.Application{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "guestbook"}, guestbook); err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "greeted", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project: "default",
			Source: &v1alpha1.ApplicationSource{RepoURL: guestbook.Spec.Source.RepoURL, TargetRevision: "HEAD", Path: "guestbook",
				Plugin: &v1alpha1.ApplicationSourcePlugin{Name: "greeter-v1", Env: v1alpha1.Env{{Name: "AUDIENCE", Value: "$ARGOCD_APP_NAME readers"}}}},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "greeted"},
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{},
				SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true"}},
		},
	}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	eventually.Within(t, eventually.Options{Timeout: 2 * time.Minute, Interval: 500 * time.Millisecond}, "the ConfigMap from the plugin", func() string {
		err := c.Get(ctx, client.ObjectKey{Namespace: "greeted", Name: "greeting"}, &cm)
		if err == nil {
			return ""
		}
		_ = c.Get(ctx, client.ObjectKeyFromObject(app), app)
		return fmt.Sprintf("%v; the app's conditions: %+v", err, app.Status.Conditions)
	})
	if cm.Data["app"] != "greeted" || cm.Data["audience"] != "greeted readers" || cm.Data["files"] == "0" || cm.Data["files"] == "" {
		t.Errorf("the plugin's ConfigMap holds %v", cm.Data)
	}
}
