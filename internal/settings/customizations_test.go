package settings

import (
	"fmt"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
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
