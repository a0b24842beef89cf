package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestSessionCookies: a token is cut into cookies a browser keeps (each
// at most 4093 bytes with its attributes), put back together from them,
// and refused when it needs more than the limit.
func TestSessionCookies(t *testing.T) {
	t.Parallel()
	size := chunkLength(true)
	for _, tc := range []struct {
		length, chunks int
	}{
		{10, 1},
		{size, 1},
		{size + 1, 2},
		{5*size + 7, 6},
	} {
		token := strings.Repeat("a", tc.length-1) + "z"
		cookies, err := sessionCookies(token, true, DefaultMaxCookieNumber)
		if err != nil || len(cookies) != tc.chunks {
			t.Fatalf("%d characters: %d cookies, %v; want %d", tc.length, len(cookies), err, tc.chunks)
		}
		req, _ := http.NewRequest(http.MethodGet, "/", nil)
		for _, c := range cookies {
			if n := len(c.String()); n > maxCookieLength {
				t.Errorf("%d characters: cookie %s is %d bytes", tc.length, c.Name, n)
			}
			req.AddCookie(c)
		}
		if got := cookieToken(req, DefaultMaxCookieNumber); got != token {
			t.Errorf("%d characters: put back together as %d characters", tc.length, len(got))
		}
		if tc.chunks > 1 {
			if cookieToken(req, tc.chunks-1) != "" {
				t.Errorf("%d characters: read past the cookie limit", tc.length)
			}
			partial, _ := http.NewRequest(http.MethodGet, "/", nil)
			partial.AddCookie(cookies[0])
			if cookieToken(partial, DefaultMaxCookieNumber) != "" {
				t.Errorf("%d characters: a token with a missing chunk was taken", tc.length)
			}
		}
	}
	_, err := sessionCookies(strings.Repeat("a", 3*size), true, 2)
	if err == nil || !strings.Contains(err.Error(), "requires 3 cookies but the max number of cookies is 2") {
		t.Errorf("over the limit: %v", err)
	}
}

// TestChunkedSessionCookiesAuthenticate: the server takes a session sent
// as chunks, refuses it with a chunk missing, and logout drops every
// chunk; a login's short token is one plain cookie.
func TestChunkedSessionCookiesAuthenticate(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, false)
	resp := f.send(t.Context(), http.MethodPost, "/api/v1/session", `{"username":"admin","password":"`+f.initialPassword()+`"}`, "")
	_ = resp.Body.Close()
	var token string
	for _, c := range resp.Cookies() {
		if c.Name != tokenCookie || strings.Contains(c.Value, ":") {
			t.Fatalf("login set cookie %s=%.20s…", c.Name, c.Value)
		}
		token = c.Value
	}
	third := len(token) / 3
	chunks := []*http.Cookie{
		{Name: tokenCookie, Value: "3:" + token[:third]},
		{Name: tokenCookie + "-1", Value: token[third : 2*third]},
		{Name: tokenCookie + "-2", Value: token[2*third:]},
	}
	userinfo := func(cookies []*http.Cookie) bool {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, f.base+"/api/v1/session/userinfo", nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var info apiwire.UserInfo
		_ = json.NewDecoder(resp.Body).Decode(&info)
		return info.LoggedIn && info.Username == "admin"
	}
	if !userinfo(chunks) {
		t.Error("a session in three chunks was not taken")
	}
	if userinfo(chunks[:2]) {
		t.Error("a session with a chunk missing was taken")
	}

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, f.base+"/api/v1/session", nil)
	for _, c := range chunks {
		req.AddCookie(c)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	dropped := map[string]bool{}
	for _, c := range resp.Cookies() {
		dropped[c.Name] = c.MaxAge < 0
	}
	for _, c := range chunks {
		if !dropped[c.Name] {
			t.Errorf("logout left cookie %s: %v", c.Name, resp.Cookies())
		}
	}
}
