package server

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/actions"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestBuiltinActionsOverTheAPI lists and runs actions of Argo CD's
// library through the API: a Deployment's scale, which takes a
// parameter, and the Application's own toggle-auto-sync, which needs the
// action permission and changes the Application.
func TestBuiltinActionsOverTheAPI(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	tn := newTenants(t, nil)
	ctx := context.Background()
	one := int32(1)
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: tn.destA}, Spec: appsv1.DeploymentSpec{Replicas: &one,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	tn.manage(t, deploy)

	query := url.Values{"namespace": {tn.destA}, "resourceName": {"web"}, "version": {"v1"}, "group": {"apps"}, "kind": {"Deployment"}}
	var list struct{ Actions []actions.Action }
	if code := tn.call("GET", "/api/v1/applications/a1/resource/actions?"+query.Encode(), "", tn.readonly, &list); code != 200 {
		t.Fatalf("listing a Deployment's actions: %d", code)
	}
	if got := fmt.Sprint(list.Actions); got != "[{pause false [] fa fa-fw fa-pause-circle } {restart false [] fa fa-fw fa-redo } {resume true [] fa fa-fw fa-play-circle } {scale false [{replicas}] fa fa-fw fa-plus-circle }]" {
		t.Errorf("a Deployment's actions: %s", got)
	}
	scale := fmt.Sprintf(`{"namespace":%q,"resourceName":"web","version":"v1","group":"apps","kind":"Deployment","action":"scale",
		"resourceActionParameters":[{"name":"replicas","value":"3"}]}`, tn.destA)
	if code := tn.call("POST", "/api/v1/applications/a1/resource/actions/v2", scale, tn.admin, nil); code != 200 {
		t.Fatalf("scale: %d", code)
	}
	if err := tn.c.Get(ctx, client.ObjectKeyFromObject(deploy), deploy); err != nil || *deploy.Spec.Replicas != 3 {
		t.Errorf("scaled to %d, want 3: %v", *deploy.Spec.Replicas, err)
	}
	bad := fmt.Sprintf(`{"namespace":%q,"resourceName":"web","version":"v1","group":"apps","kind":"Deployment","action":"scale",
		"resourceActionParameters":[{"name":"replicas","value":"lots"}]}`, tn.destA)
	resp := tn.send(ctx, "POST", "/api/v1/applications/a1/resource/actions/v2", bad, tn.admin)
	if msg := readAll(t, resp); resp.StatusCode == 200 || !strings.Contains(msg, "invalid number: lots") {
		t.Errorf("a replica count that is no number: %d %s", resp.StatusCode, msg)
	}

	self := url.Values{"resourceName": {"a1"}, "version": {"v1alpha1"}, "group": {"argoproj.io"}, "kind": {"Application"}}
	if code := tn.call("GET", "/api/v1/applications/a1/resource/actions?"+self.Encode(), "", tn.readonly, &list); code != 200 {
		t.Fatalf("listing the Application's own actions: %d", code)
	}
	if len(list.Actions) != 1 || list.Actions[0].Name != "toggle-auto-sync" || list.Actions[0].DisplayName != "Enable Auto-Sync" {
		t.Errorf("the Application's own actions: %+v", list.Actions)
	}
	toggle := `{"resourceName":"a1","version":"v1alpha1","group":"argoproj.io","kind":"Application","action":"toggle-auto-sync"}`
	if code := tn.call("POST", "/api/v1/applications/a1/resource/actions/v2", toggle, tn.teamA, nil); code != 403 {
		t.Errorf("toggle-auto-sync by a role that may update but not run actions: %d, want 403", code)
	}
	if code := tn.call("POST", "/api/v1/applications/a1/resource/actions/v2", toggle, tn.admin, nil); code != 200 {
		t.Fatalf("toggle-auto-sync: %d", code)
	}
	app := &v1alpha1.Application{}
	if err := tn.c.Get(ctx, client.ObjectKey{Namespace: tn.ns, Name: "a1"}, app); err != nil {
		t.Fatal(err)
	}
	if sp := app.Spec.SyncPolicy; sp == nil || sp.Automated == nil || sp.Automated.Enabled == nil || !*sp.Automated.Enabled {
		t.Errorf("auto-sync not enabled: %+v", sp)
	}
}
