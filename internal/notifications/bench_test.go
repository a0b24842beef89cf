package notifications

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/capstan-cd/capstan/internal/settings"
)

// BenchmarkProcessCatalog is the cost of looking at one Application
// update when it is subscribed to every trigger of Argo CD's catalog and
// everything due was told already: what the controller pays per update
// in the steady state.
func BenchmarkProcessCatalog(b *testing.B) {
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	data := catalog(b)
	data["service.webhook.ci"] = "url: " + hook.URL + "\n"
	cfg, err := Parse(&settings.Notifications{Data: data})
	if err != nil {
		b.Fatal(err)
	}
	subs := Subscriptions{}
	for name := range cfg.Triggers {
		subs[name] = []Destination{{Service: "ci"}}
	}
	app := loadAppB(b)
	p := NewProcessor(cfg, nil, nil)
	state := State{}
	if _, _, err := p.Process(context.Background(), app, subs, state); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if deliveries, _, _ := p.Process(context.Background(), app, subs, state); len(deliveries) != 0 {
			b.Fatal("sent again")
		}
	}
}
