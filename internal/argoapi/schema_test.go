package argoapi

import (
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
