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
