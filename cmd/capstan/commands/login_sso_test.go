package commands

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/dexserver"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestLoginWithSSO runs capstan login --sso against a server whose
// oidc.config names Dex: the CLI's own PKCE flow through a (scripted)
// browser to its localhost callback, then API calls with the ID token.
func TestLoginWithSSO(t *testing.T) { overBothAPIs(t, loginWithSSO) }

func loginWithSSO(t *testing.T, flags ...string) {
	f := startCapstan(t, false)
	f.flags = flags
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	dex := dexserver.Start(t,
		dexserver.Client{ID: "capstan", Secret: "server-secret", RedirectURIs: []string{"https://" + f.addr + "/auth/callback"}},
		dexserver.Client{ID: "capstan-cli", Public: true, RedirectURIs: []string{fmt.Sprintf("http://localhost:%d/auth/callback", port),
			fmt.Sprintf("http://127.0.0.1:%d/auth/callback", port)}})
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{
			"url":         "https://" + f.addr,
			"oidc.config": fmt.Sprintf("name: Dex\nissuer: %s\nclientID: capstan\nclientSecret: server-secret\ncliClientID: capstan-cli\n", dex.Issuer),
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns}, Data: map[string]string{"policy.csv": "g, " + dexserver.Group + ", role:readonly\n"}},
	} {
		if err := testobj.Put(ctx, f.c, cm); err != nil {
			t.Fatal(err)
		}
	}

	// browse runs an SSO login command and plays the browser: Dex's mock
	// connector logs in at once and sends the browser back to the CLI's
	// callback, whose address the login address must name.
	browse := func(callback string, args ...string) {
		t.Helper()
		pr, pw := io.Pipe()
		lines := make(chan string, 16)
		go func() {
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		var stderr bytes.Buffer
		exit := make(chan int, 1)
		go func() {
			exit <- Execute(append(args, flags...), pw, &stderr)
			_ = pw.Close()
		}()
		var authURL string
		select {
		case line := <-lines:
			_, authURL, _ = strings.Cut(line, "SSO login: ")
		case <-time.After(30 * time.Second):
			t.Fatalf("%v printed no login address; stderr %s", args, stderr.String())
		}
		if !strings.HasPrefix(authURL, dex.Issuer) || !strings.Contains(authURL, "code_challenge=") ||
			!strings.Contains(authURL, "redirect_uri="+url.QueryEscape(callback+"/auth/callback")) {
			t.Fatalf("%v: login address %q", args, authURL)
		}
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(authURL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if code := <-exit; code != 0 || !strings.Contains(string(body), "Logged in") {
			t.Fatalf("%v: exit %d, browser saw %q, stderr %s", args, code, body, stderr.String())
		}
	}
	browse(fmt.Sprintf("http://localhost:%d", port),
		"login", f.addr, "--sso", "--sso-port", strconv.Itoa(port), "--sso-launch-browser=false", "--insecure", "--config", f.config)
	// relogin --callback: the provider sends the browser back to that address.
	browse(fmt.Sprintf("http://127.0.0.1:%d", port),
		"relogin", "--sso-port", strconv.Itoa(port), "--callback", fmt.Sprintf("http://127.0.0.1:%d", port), "--sso-launch-browser=false", "--config", f.config)
	if code, out, _ := f.run("account", "get-user-info"); code != 0 || !strings.Contains(out, "Username: "+dexserver.Email) || !strings.Contains(out, "Groups: "+dexserver.Group) {
		t.Errorf("get-user-info after SSO: %d\n%s", code, out)
	}
	if code, out, errOut := f.run("app", "list"); code != 0 {
		t.Errorf("app list as the SSO user (readonly through the group): %d %s%s", code, out, errOut)
	}
	if code, _, errOut := f.run("proj", "create", "not-allowed"); code != 1 || !strings.Contains(errOut, "permission denied") {
		t.Errorf("a readonly SSO user creating a project: %d %s", code, errOut)
	}
}
