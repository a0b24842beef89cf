package argoapi

import (
	"encoding/json"
	"regexp"
	"testing"
)

func TestSchemaHasArgoCDsServices(t *testing.T) {
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	methods, err := s.Methods()
	if err != nil {
		t.Fatal(err)
	}
	bound := 0
	for _, md := range methods {
		if _, ok := BindingOf(md); ok {
			bound++
		}
	}
	t.Logf("%d methods, %d with a REST binding", len(methods), bound)
	sd, err := s.Service("version.VersionService")
	if err != nil {
		t.Fatal(err)
	}
	b, ok := BindingOf(sd.Methods().ByName("Version"))
	if !ok || b.Method != "GET" || b.Path != "/api/version" {
		t.Errorf("version.VersionService/Version: %+v %v", b, ok)
	}
}

// TestSwagger: the Swagger document describes every REST binding with
// its path parameters and refers only to definitions it has.
func TestSwagger(t *testing.T) {
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.Swagger()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Swagger     string
		Paths       map[string]map[string]struct{ OperationID string }
		Definitions map[string]any
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Swagger != "2.0" || doc.Paths["/api/v1/applications/{name}"]["get"].OperationID != "ApplicationService_Get" ||
		doc.Paths["/api/v1/repositories/{source.repoURL}/appdetails"]["post"].OperationID != "RepositoryService_GetAppDetails" {
		t.Errorf("paths: %d, application get %+v", len(doc.Paths), doc.Paths["/api/v1/applications/{name}"])
	}
	if _, ok := doc.Definitions["v1alpha1Application"]; !ok {
		t.Error("no v1alpha1Application definition")
	}
	for _, ref := range regexp.MustCompile(`"#/definitions/([^"]+)"`).FindAllStringSubmatch(string(data), -1) {
		if _, ok := doc.Definitions[ref[1]]; !ok {
			t.Errorf("%s is referred to but not defined", ref[1])
		}
	}
}
