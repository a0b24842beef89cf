package server

import (
	"net/http/httptest"
	"testing"
)

func TestUIFilter(t *testing.T) {
	t.Parallel()
	app := appSummary{Name: "Web-Frontend", Project: "team-a", Cluster: "https://kubernetes.default.svc", DestNamespace: "web", Repo: "https://git.example.com/web.git",
		AutoSync: true, Operation: "Running", annotations: map[string]string{"team": "shop", "tier": ""}}
	tests := []struct {
		query   string
		keeps   bool
		wantErr bool
	}{
		{"", true, false},
		{"?search=front", true, false},
		{"?search=FRONT", true, false},
		{"?search=back", false, false},
		{"?project=team-b&project=team-a", true, false},
		{"?project=team-b", false, false},
		{"?cluster=https://kubernetes.default.svc&namespace=web", true, false},
		{"?namespace=api", false, false},
		{"?repo=https://git.example.com/api.git", false, false},
		{"?name=other&name=Web-Frontend", true, false},
		{"?name=other", false, false},
		{"?targetRevision=HEAD", true, false},
		{"?targetRevision=main", false, false},
		{"?autoSync=Enabled", true, false},
		{"?autoSync=Disabled", false, false},
		{"?operation=Running&operation=Failed", true, false},
		{"?operation=None", false, false},
		{"?annotation=team=shop&annotation=tier", true, false},
		{"?annotation=team=web", false, false},
		{"?annotation=owner", false, false},
		{"?offset=-1", false, true},
		{"?limit=x", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			f, err := parseUIFilter(httptest.NewRequest("GET", "/api/v1/ui/applications"+tt.query, nil))
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if err == nil && f.keeps(app) != tt.keeps {
				t.Errorf("keeps = %v, want %v", !tt.keeps, tt.keeps)
			}
		})
	}
	f, _ := parseUIFilter(httptest.NewRequest("GET", "/?limit=100000", nil))
	if f.limit != uiMaxLimit {
		t.Errorf("a limit over the bound is %d, want %d", f.limit, uiMaxLimit)
	}
}
