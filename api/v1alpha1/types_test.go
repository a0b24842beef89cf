package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestAddToSchemeRegistersBothKinds(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []struct{ kind string }{{"Application"}, {"ApplicationList"}, {"AppProject"}, {"AppProjectList"}} {
		if !s.Recognizes(GroupVersion.WithKind(gvk.kind)) {
			t.Errorf("scheme does not recognise %s", gvk.kind)
		}
	}
}

// TestJSONFieldNamesMatchArgoCD pins JSON keys whose Go names differ from
// them, where a rename would silently break Argo CD manifests.
func TestJSONFieldNamesMatchArgoCD(t *testing.T) {
	app := Application{
		Spec: ApplicationSpec{
			Source: &ApplicationSource{
				RepoURL: "r",
				Plugin: &ApplicationSourcePlugin{Parameters: ApplicationSourcePluginParameters{
					{Name: "p", String_: ptr.To("v")},
				}},
				Directory: &ApplicationSourceDirectory{Jsonnet: ApplicationSourceJsonnet{TLAs: []JsonnetVar{{Name: "a", Value: "b"}}}},
				Helm:      &ApplicationSourceHelm{APIVersions: []string{"v1"}, SkipCrds: true},
			},
			IgnoreDifferences: IgnoreDifferences{{Kind: "Secret", JSONPointers: []string{"/data"}, JQPathExpressions: []string{".x"}}},
		},
		Operation: &Operation{Sync: &SyncOperation{SelfHealAttemptsCount: 2}},
	}
	proj := AppProject{Spec: AppProjectSpec{
		Roles:       []ProjectRole{{Name: "r", JWTTokens: []JWTToken{{IssuedAt: 1, ExpiresAt: 2, ID: "x"}}}},
		SyncWindows: SyncWindows{{UseAndOperator: true}},
	}}
	for _, tc := range []struct {
		obj  any
		keys []string
	}{
		{app, []string{`"repoURL"`, `"string":"v"`, `"tlas"`, `"apiVersions"`, `"skipCrds"`, `"jsonPointers"`, `"jqPathExpressions"`, `"autoHealAttemptsCount":2`}},
		{proj, []string{`"jwtTokens"`, `"iat":1`, `"exp":2`, `"andOperator":true`}},
	} {
		data, err := json.Marshal(tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range tc.keys {
			if !strings.Contains(string(data), k) {
				t.Errorf("JSON lacks %s:\n%s", k, data)
			}
		}
	}
}

func TestOperationPhase(t *testing.T) {
	for phase, want := range map[OperationPhase][2]bool{
		OperationRunning:     {false, false},
		OperationTerminating: {false, false},
		OperationFailed:      {true, false},
		OperationError:       {true, false},
		OperationSucceeded:   {true, true},
	} {
		if got := [2]bool{phase.Completed(), phase.Successful()}; got != want {
			t.Errorf("%s: completed, successful = %v, want %v", phase, got, want)
		}
	}
}
