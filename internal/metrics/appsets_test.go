package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

type appSetList []*v1alpha1.ApplicationSet

func (l appSetList) ListApplicationSets() []*v1alpha1.ApplicationSet { return l }

// TestAppSets: the per-ApplicationSet gauges come from the ApplicationSets
// listed at scrape time, the labels named become label_<name>, and a
// reconcile is observed in seconds.
func TestAppSets(t *testing.T) {
	a := NewAppSets([]string{"team", "app.kubernetes.io/part-of"})
	reg := prometheus.NewPedanticRegistry()
	for _, c := range a.Collectors() {
		reg.MustRegister(c)
	}
	if n, err := testutil.GatherAndCount(reg, "argocd_appset_info"); err != nil || n != 0 {
		t.Errorf("before a lister: %d series, %v", n, err)
	}
	upToDate := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "web", Labels: map[string]string{"team": "a"}},
		Status: v1alpha1.ApplicationSetStatus{
			Conditions: []v1alpha1.ApplicationSetCondition{{Type: v1alpha1.ApplicationSetConditionResourcesUpToDate, Reason: "ApplicationSetUpToDate"}},
			Resources:  []v1alpha1.ResourceStatus{{Name: "web-a"}, {Name: "web-b"}},
		}}
	fresh := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "new"}}
	a.SetLister(appSetList{upToDate, fresh})
	a.ObserveReconcile(upToDate, 1500*time.Millisecond)
	want := `
# HELP argocd_appset_info Information about applicationset
# TYPE argocd_appset_info gauge
argocd_appset_info{name="web",namespace="argocd",resource_update_status="ApplicationSetUpToDate"} 1
argocd_appset_info{name="new",namespace="team",resource_update_status="Unknown"} 1
# HELP argocd_appset_owned_applications Number of applications owned by the applicationset
# TYPE argocd_appset_owned_applications gauge
argocd_appset_owned_applications{name="web",namespace="argocd"} 2
argocd_appset_owned_applications{name="new",namespace="team"} 0
# HELP argocd_appset_labels Applicationset labels translated to Prometheus labels
# TYPE argocd_appset_labels gauge
argocd_appset_labels{label_app_kubernetes_io_part_of="",label_team="a",name="web",namespace="argocd"} 1
argocd_appset_labels{label_app_kubernetes_io_part_of="",label_team="",name="new",namespace="team"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "argocd_appset_info", "argocd_appset_owned_applications", "argocd_appset_labels"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(a.reconcile, "argocd_appset_reconcile"); n != 1 {
		t.Errorf("argocd_appset_reconcile: %d series", n)
	}
}
