package settings

import (
	"fmt"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

func TestCustomizations(t *testing.T) {
	a := &ArgoCD{Data: map[string]string{
		"resource.customizations.ignoreDifferences.apps_Deployment": "jsonPointers: [/spec/replicas]\n",
		"resource.customizations.ignoreDifferences.Service":         "jqPathExpressions: ['.spec.ports[]?.nodePort']\n",
		"resource.customizations.ignoreDifferences.all":             "managedFieldsManagers: [kube-controller-manager]\n",
		"resource.customizations.health.argoproj.io_Rollout":        "return {}",
		"resource.customizations": "batch/Job:\n  ignoreDifferences: |\n    jsonPointers: [/spec/suspend]\n" +
			"  knownTypeFields:\n  - field: spec.template\n    type: core/v1/PodTemplateSpec\n",
	}}
	tests := []struct {
		field string
		want  string
	}{
		{"ignoreDifferences", "resource.customizations.ignoreDifferences.Service /Service; resource.customizations.ignoreDifferences.all */*; " +
			"resource.customizations.ignoreDifferences.apps_Deployment apps/Deployment; resource.customizations[batch/Job] batch/Job"},
		{"health", "resource.customizations.health.argoproj.io_Rollout argoproj.io/Rollout"},
		{"knownTypeFields", "resource.customizations[batch/Job] batch/Job"},
		{"actions", ""},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			cs, err := a.Customizations(tt.field)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cs {
				got = append(got, fmt.Sprintf("%s %s/%s", c.Key, c.Group, c.Kind))
			}
			if strings.Join(got, "; ") != tt.want {
				t.Errorf("got  %s\nwant %s", strings.Join(got, "; "), tt.want)
			}
		})
	}

	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{IgnoreDifferences: []v1alpha1.ResourceIgnoreDifferences{{Kind: "ConfigMap", Name: "own"}}}}
	rules, err := a.IgnoreDifferencesFor(app)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 5 || rules[1].Group != "*" || rules[1].Kind != "*" || rules[1].ManagedFieldsManagers[0] != "kube-controller-manager" ||
		rules[2].JSONPointers[0] != "/spec/replicas" || rules[4].Name != "own" {
		t.Errorf("rules: %+v", rules)
	}

	// A customization that cannot be read is named and left out.
	a.Data["resource.customizations.ignoreDifferences.apps_StatefulSet"] = "jsonPointer: [/spec/replicas]\n"
	rules, err = a.IgnoreDifferencesFor(app)
	if err == nil || !strings.Contains(err.Error(), "apps_StatefulSet") || len(rules) != 5 {
		t.Errorf("a misspelt field: %v, %d rules", err, len(rules))
	}
}

func TestResourceFilter(t *testing.T) {
	localcluster.Need(t)
	tests := []struct {
		name                  string
		exclusions, inclusion string
		group, kind, cluster  string
		excluded              bool
	}{
		{"nothing set", "", "", "apps", "Deployment", "https://a", false},
		{"events, always", "", "", "", "Event", "https://a", true},
		{"events.k8s.io, always", "", "", "events.k8s.io", "Event", "https://a", true},
		{"excluded kind", "- {apiGroups: [''], kinds: [ConfigMap]}", "", "", "ConfigMap", "https://a", true},
		{"another kind", "- {apiGroups: [''], kinds: [ConfigMap]}", "", "", "Secret", "https://a", false},
		{"same kind, another group", "- {apiGroups: [''], kinds: [ConfigMap]}", "", "other.io", "ConfigMap", "https://a", false},
		{"globs", "- {apiGroups: ['*.k8s.io'], kinds: ['*Review']}", "", "authorization.k8s.io", "SubjectAccessReview", "https://a", true},
		{"another cluster", "- {kinds: [Lease], clusters: ['https://b*']}", "", "coordination.k8s.io", "Lease", "https://a", false},
		{"that cluster", "- {kinds: [Lease], clusters: ['https://b*']}", "", "coordination.k8s.io", "Lease", "https://b.example.com", true},
		{"included", "", "- {apiGroups: [apps], kinds: [Deployment]}", "apps", "Deployment", "https://a", false},
		{"not included", "", "- {apiGroups: [apps], kinds: [Deployment]}", "", "ConfigMap", "https://a", true},
		{"excluded wins over included", "- {kinds: [Deployment]}", "- {apiGroups: [apps]}", "apps", "Deployment", "https://a", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &ArgoCD{Data: map[string]string{ResourceExclusionsKey: tt.exclusions, ResourceInclusionsKey: tt.inclusion}}
			f, err := a.ResourceFilter()
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Excluded(tt.group, tt.kind, tt.cluster); got != tt.excluded {
				t.Errorf("Excluded(%q, %q, %q) = %v", tt.group, tt.kind, tt.cluster, got)
			}
		})
	}
	if _, err := (&ArgoCD{Data: map[string]string{ResourceExclusionsKey: "- {apiGroup: [apps]}"}}).ResourceFilter(); err == nil ||
		!strings.Contains(err.Error(), ResourceExclusionsKey) {
		t.Errorf("a misspelt field: %v", err)
	}
}

// TestUnknownKeys: every key Argo CD's documented argocd-cm sets (or
// shows commented out) is known; a misspelt one is reported.
func TestUnknownKeys(t *testing.T) {
	data := toolbin.ArgoCDDocumentedConfigMap(t, "argocd-cm.yaml")
	for _, k := range []string{"help.download.linux-amd64", "kustomize.path.v3.9.1", "accounts.alice", "accounts.alice.enabled"} {
		data[k] = "x" // families, named after something
	}
	if unknown := (&ArgoCD{Data: data}).UnknownKeys(); len(unknown) != 0 {
		t.Errorf("documented keys reported unknown: %v", unknown)
	}
	data["timeout.reconcilation"], data["users.session.duraton"] = "3m", "1h"
	if got := (&ArgoCD{Data: data}).UnknownKeys(); strings.Join(got, ",") != "timeout.reconcilation,users.session.duraton" {
		t.Errorf("misspelt keys: %v", got)
	}
}

func TestCompareOptions(t *testing.T) {
	for raw, want := range map[string]string{
		"ignoreAggregatedRoles: true\nignoreResourceStatusField: crd": "",
		"ignoreResourceStatusField: all":                              "",
		"ignoreResourceStatusField: none":                             "not supported",
		"ignoreResourceStatusField: some":                             "want crd, all or none",
		"ignoreAggregatedRoles: [":                                    "resource.compareoptions",
	} {
		a := &ArgoCD{Data: map[string]string{"resource.compareoptions": raw}}
		rules, err := a.IgnoreDifferencesFor(&v1alpha1.Application{})
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v; want %q", raw, err, want)
		}
		aggregated := len(rules) == 1 && rules[0].Kind == "ClusterRole" && len(rules[0].JQPathExpressions) == 1
		if aggregated != strings.Contains(raw, "ignoreAggregatedRoles: true") {
			t.Errorf("%q: rules %+v", raw, rules)
		}
	}
}

func TestIgnoreResourceUpdates(t *testing.T) {
	rules, on, err := (&ArgoCD{Data: map[string]string{}}).IgnoreResourceUpdates()
	if err != nil || !on || len(rules) != 1 || rules[0].Kind != "*" {
		t.Errorf("default: %v %v %v; want on, with the metadata rule", rules, on, err)
	}
	a := &ArgoCD{Data: map[string]string{
		"resource.customizations.ignoreResourceUpdates.apps_Deployment": "jsonPointers: [/status]",
		"resource.customizations.ignoreDifferences.all":                 "jqPathExpressions: [.spec.replicas]",
		"resource.compareoptions":                                       "ignoreDifferencesOnResourceUpdates: true",
	}}
	if rules, on, err := a.IgnoreResourceUpdates(); err != nil || !on || len(rules) != 3 || rules[0].Kind != "Deployment" {
		t.Errorf("with customizations: %+v %v %v", rules, on, err)
	}
	a.Data["resource.ignoreResourceUpdatesEnabled"] = "false"
	if rules, on, _ := a.IgnoreResourceUpdates(); on || rules != nil {
		t.Errorf("disabled: %v %v", rules, on)
	}
}

// TestEveryDocumentedKeyDecided: every key of Argo CD's documented
// argocd-cm is known, and each one Capstan does not act on is named with
// why, as the controller logs it; none is silent.
func TestEveryDocumentedKeyDecided(t *testing.T) {
	documented := toolbin.ArgoCDDocumentedConfigMap(t, "argocd-cm.yaml")
	a := &ArgoCD{Data: documented}
	reported := map[string]bool{}
	for _, k := range a.NoEffectKeys() {
		if k.Reason == "" {
			t.Errorf("%s has no effect and no reason", k.Key)
		}
		reported[k.Key] = true
	}
	for key := range noEffectKeys {
		probe := strings.TrimSuffix(key, ".") + map[bool]string{true: ".x", false: ""}[strings.HasSuffix(key, ".")]
		if (&ArgoCD{Data: map[string]string{probe: "x"}}).UnknownKeys() != nil {
			t.Errorf("%s is in noEffectKeys but not a known key", key)
		}
		if _, ok := documented[probe]; ok && !reported[probe] {
			t.Errorf("%s is documented and has no effect, but is not reported", probe)
		}
	}
	t.Logf("%d documented keys; %d of them change nothing in Capstan, each logged with why", len(documented), len(reported))
}
