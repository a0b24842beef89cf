package apiclient

import (
	"fmt"
	"testing"
)

func TestConfigContexts(t *testing.T) {
	cfg := &Config{}
	cfg.Upsert("prod", Server{Server: "prod.example.com"}, "t1")
	cfg.Upsert("staging", Server{Server: "staging.example.com"}, "t2")
	if err := cfg.Use("prod"); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Delete("prod"); err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "" || len(cfg.Contexts) != 1 || len(cfg.Servers) != 1 || len(cfg.Users) != 1 {
		t.Errorf("after deleting prod: %+v", cfg)
	}
	if err := cfg.Delete("prod"); err == nil {
		t.Error("deleting a context twice")
	}
	if _, tok, err := cfg.Context("staging"); err != nil || tok != "t2" {
		t.Errorf("staging: %q %v", tok, err)
	}
}

// A second server's session beside the first; the first is current.
func ExampleConfig_Upsert() {
	cfg := &Config{}
	cfg.Upsert("capstan.example.com", Server{Server: "capstan.example.com"}, "token")
	cfg.Upsert("staging", Server{Server: "staging.example.com", GRPCWeb: true}, "other")
	_ = cfg.Use("capstan.example.com")
	s, _, _ := cfg.Current()
	fmt.Println(cfg.CurrentContext, s.Server, len(cfg.Contexts))
	// Output: capstan.example.com capstan.example.com 2
}
