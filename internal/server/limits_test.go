package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// rawRequest writes a request's head (and no more) on a new connection
// and returns the connection, to send a body slowly or not at all.
func (f *fixture) rawRequest(method, path string, header map[string]string) net.Conn {
	f.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.base, "http://"))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: capstan\r\n", method, path)
	for k, v := range header {
		fmt.Fprintf(conn, "%s: %s\r\n", k, v)
	}
	fmt.Fprint(conn, "\r\n")
	return conn
}

func readStatus(t *testing.T, conn net.Conn) int {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func TestRequestBodiesAreBounded(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	// A user name longer than Argo CD's 32 bytes, and a login body far
	// larger than any real one.
	var answer map[string]any
	if code := f.call("POST", "/api/v1/session", `{"username":"`+strings.Repeat("u", 33)+`","password":"x"}`, "", &answer); code != 400 || answer["message"] != "Username is too long (32 bytes max)" {
		t.Errorf("long user name: %d %v", code, answer)
	}
	if code := f.call("POST", "/api/v1/session", `{"username":"`+strings.Repeat("u", 3<<20)+`","password":"x"}`, "", &answer); code != 413 {
		t.Errorf("3 MB login: %d %v", code, answer)
	}
	if code := f.call("POST", "/api/v1/session", `{"username":"admin","password":""}`, "", &answer); code != 401 || answer["message"] != "Blank passwords are not allowed" {
		t.Errorf("blank password: %d %v", code, answer)
	}
	// Declared lengths over the limit are refused before the body is read,
	// over REST and RPC alike.
	for _, path := range []string{"/api/v1/applications", "/capstan.v1.ApplicationService/Create"} {
		conn := f.rawRequest("POST", path, map[string]string{"Content-Length": "104857600", "Content-Type": "application/json"})
		if code := readStatus(t, conn); code != 413 {
			t.Errorf("POST %s with 100 MB declared: %d, want 413", path, code)
		}
	}
	// A body of undeclared length is cut at the limit.
	token := f.adminToken()
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(`{"metadata":{"name":"x","annotations":{"a":"`))
		chunk := []byte(strings.Repeat("a", 1<<20))
		for range 100 {
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", f.base+"/api/v1/applications", pr)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pr.CloseWithError(io.ErrClosedPipe)
	if resp.StatusCode != 413 {
		t.Errorf("streamed 100 MB body: %d, want 413", resp.StatusCode)
	}
}

func TestUnauthenticatedCallersShareABudget(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	token := f.adminToken()
	// Requests without a session that hold their bodies open use up the
	// budget; the next one is told to come back later.
	var conns []net.Conn
	for range maxUnauthenticatedRequests {
		conns = append(conns, f.rawRequest("POST", "/api/v1/session", map[string]string{"Content-Length": "100", "Content-Type": "application/json"}))
	}
	time.Sleep(500 * time.Millisecond) // let the server take them in
	extra := f.rawRequest("POST", "/api/v1/session", map[string]string{"Content-Length": "2"})
	fmt.Fprint(extra, "{}")
	if code := readStatus(t, extra); code != http.StatusTooManyRequests {
		t.Errorf("a request over the budget: %d, want 429", code)
	}
	// A caller with a session is not held back by the anonymous ones.
	if code := f.call("GET", "/api/v1/applications", "", token, nil); code != 200 {
		t.Errorf("an authenticated request during the flood: %d", code)
	}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	wg.Wait()
}

// TestWebhookPayloadLimit: a Git provider's event is bounded by argocd-cm's
// webhook.maxPayloadSizeMB, 50 by default as in Argo CD: a larger declared
// body is refused before it is read, and the bound follows the setting.
func TestWebhookPayloadLimit(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	conn := f.rawRequest("POST", "/api/webhook", map[string]string{"Content-Length": strconv.Itoa(51 << 20), "X-GitHub-Event": "push"})
	if code := readStatus(t, conn); code != 413 {
		t.Errorf("a 51 MB event by default: %d, want 413", code)
	}
	event := `{"ref":"refs/heads/main","pad":"` + strings.Repeat("x", 2<<20) + `"}`
	if code := f.post(event, nil); code != 400 { // read, and found to be no provider's event
		t.Errorf("a 2 MB body by default: %d, want 400", code)
	}
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"webhook.maxPayloadSizeMB": "1"}}); err != nil {
		t.Fatal(err)
	}
	if code := f.post(event, nil); code != 413 {
		t.Errorf("a 2 MB body with webhook.maxPayloadSizeMB 1: %d, want 413", code)
	}
}
