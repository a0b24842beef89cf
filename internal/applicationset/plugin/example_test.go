package plugin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/capstan-cd/capstan/internal/applicationset/plugin"
)

func ExampleClient_Params() {
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"output":{"parameters":[{"env":"dev"},{"env":"prod"}]}}`))
	}))
	defer svc.Close()

	sets, err := plugin.Client{BaseURL: svc.URL, Token: "token"}.Params(context.Background(), "envs", nil)
	fmt.Println(sets, err)
	// Output: [map[env:dev] map[env:prod]] <nil>
}
