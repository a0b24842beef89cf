package commands

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestDiffAgreesWithSyncStatus drifts three ConfigMaps of a synced app,
// one of them in a field ignoreDifferences ignores, and deletes a fourth:
// the API server's diff (app diff) and the controller's sync status must
// name the same resources as differing.
func TestDiffAgreesWithSyncStatus(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, true)
	f.login()
	ctx := context.Background()
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	files := map[string]string{}
	for _, name := range []string{"steady", "drifted", "ignored", "deleted"} {
		files["app/"+name+".yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {v: one, w: one}\n"
	}
	remote.Commit(t, "four", files)
	f.expect(0, "app", "create", "agree", "--repo", remote.URL, "--path", "app",
		"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)
	app := &v1alpha1.Application{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "agree"}, app); err != nil {
		t.Fatal(err)
	}
	orig := app.DeepCopy()
	app.Spec.IgnoreDifferences = []v1alpha1.ResourceIgnoreDifferences{{Kind: "ConfigMap", Name: "ignored", JSONPointers: []string{"/data/v"}}}
	if err := f.c.Patch(ctx, app, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	f.expect(0, "app", "sync", "agree", "--timeout", "60")

	edit := func(name, key string) {
		cm := &corev1.ConfigMap{}
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: name}, cm); err != nil {
			t.Fatal(err)
		}
		cm.Data[key] = "edited"
		if err := f.c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	edit("drifted", "v")
	edit("ignored", "v") // ignored: no difference
	if err := f.c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dest, Name: "deleted"}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"/ConfigMap " + dest + "/deleted", "/ConfigMap " + dest + "/drifted"}

	// The controller sees the changes through its watches.
	eventually.String(t, fmt.Sprintf("the controller's out-of-sync resources %v", want), func() string {
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "agree"}, app); err != nil {
			return err.Error()
		}
		var status []string
		for _, rs := range app.Status.Resources {
			if rs.Status != v1alpha1.SyncStatusCodeSynced {
				status = append(status, rs.Group+"/"+rs.Kind+" "+rs.Namespace+"/"+rs.Name)
			}
		}
		if slices.Equal(status, want) {
			return ""
		}
		return fmt.Sprintf("%v", status)
	})

	out := f.expect(1, "app", "diff", "agree")
	var shown []string
	for _, m := range regexp.MustCompile(`(?m)^===== (\S+ \S+) ======$`).FindAllStringSubmatch(out, -1) {
		shown = append(shown, m[1])
	}
	slices.Sort(shown)
	if !slices.Equal(shown, want) {
		t.Errorf("app diff shows %v, the controller's status has %v out of sync:\n%s", shown, want, out)
	}
	if strings.Contains(out, "ignored") {
		t.Errorf("the ignored difference is shown:\n%s", out)
	}
}
