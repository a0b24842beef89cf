package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestParams(t *testing.T) {
	big := `{"output":{"parameters":[` + strings.Repeat(`{},`, MaxParameterSets) + `{}]}}`
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    int
		wantErr string
	}{
		{name: "answer", want: 2, handler: func(w http.ResponseWriter, r *http.Request) {
			var req Request
			if r.URL.Path != "/"+Path || r.Header.Get("Authorization") != "Bearer s3cret" ||
				json.NewDecoder(r.Body).Decode(&req) != nil || req.ApplicationSetName != "demo" || req.Input.Parameters["env"] != "prod" {
				http.Error(w, `{"message":"bad request"}`, http.StatusBadRequest)
				return
			}
			_, _ = w.Write([]byte(`{"output":{"parameters":[{"a":"1"},{"a":"2","nested":{"b":true}}]}}`))
		}},
		{name: "error message", wantErr: "answered 403: no entry", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":"no entry"}`, http.StatusForbidden)
		}},
		{name: "not JSON", wantErr: "decoding plugin answer", handler: func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`<html>`))
		}},
		{name: "too many sets", wantErr: ErrTooLarge.Error(), handler: func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(big))
		}},
		{name: "too many bytes", wantErr: ErrTooLarge.Error(), handler: func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"output":{"parameters":[{"a":"`))
			_, _ = w.Write([]byte(strings.Repeat("x", MaxResponseBytes)))
			_, _ = w.Write([]byte(`"}]}}`))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			c := Client{BaseURL: srv.URL + "/", Token: "s3cret"}
			got, err := c.Params(context.Background(), "demo", map[string]any{"env": "prod"})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != tt.want {
				t.Fatalf("got %v, %v; want %d sets", got, err, tt.want)
			}
		})
	}
}

func TestParamsTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	_, err := Client{BaseURL: srv.URL, Token: "t", Timeout: 50 * time.Millisecond}.Params(context.Background(), "demo", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the deadline", err)
	}
}
