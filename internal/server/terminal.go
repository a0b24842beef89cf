package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/settings"
)

// terminalMessage is one message of a terminal's WebSocket, in Argo CD's
// form: from the browser "stdin" (data) and "resize" (rows, cols), to it
// "stdout" (data).
type terminalMessage struct {
	Operation string `json:"operation"`
	Data      string `json:"data"`
	Rows      uint16 `json:"rows"`
	Cols      uint16 `json:"cols"`
}

// maxTerminalMessage bounds one message from the browser.
const maxTerminalMessage = 64 << 10

// terminal serves GET /terminal, Argo CD's web terminal: a shell in a
// container of one of an Application's pods, over a WebSocket. It needs
// argocd-cm's exec.enabled and the caller's (exec, create) on the
// Application; the shell is the one asked for when exec.shells allows it,
// else the first of exec.shells that starts.
func (s *Server) terminal(w http.ResponseWriter, r *http.Request, c *caller) error {
	cm, err := settings.LoadArgoCD(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return err
	}
	if !cm.ExecEnabled() {
		return notFound("the web terminal is off (exec.enabled in argocd-cm)")
	}
	q := r.URL.Query()
	pod, container, appName, project, namespace := q.Get("pod"), q.Get("container"), q.Get("appName"), q.Get("projectName"), q.Get("namespace")
	if pod == "" || container == "" || appName == "" || project == "" || namespace == "" {
		return badRequest("Missing required parameters")
	}
	for kind, name := range map[string]string{"pod": pod, "container": container, "app": appName, "project": project, "namespace": namespace} {
		if err := checkName(kind, name); err != nil {
			return err
		}
	}
	r.SetPathValue("name", appName)
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return err
	}
	if object := s.appObject(app); !c.can(rbac.ResourceExec, rbac.ActionCreate, object) {
		return c.forbidden(rbac.ResourceExec, rbac.ActionCreate, object)
	}
	if app.Spec.Project != project && !(app.Spec.Project == "" && project == v1alpha1.DefaultAppProjectName) {
		return badRequest("The wrong project was specified for the app")
	}
	ref := appstate.ResourceRef{Kind: "Pod", Namespace: namespace, Name: pod}
	if _, err := s.state.Pods(r.Context(), app, ref); err != nil {
		return badRequest("Pod doesn't belong to specified app")
	}
	shells := terminalShells(cm.ExecShells(), q.Get("shell"))
	upgrader := websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096, CheckOrigin: s.sameOrigin}
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return nil // the upgrader answered
	}
	defer conn.Close()
	conn.SetReadLimit(maxTerminalMessage)
	t := newTerminalSession(conn)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go t.readLoop(cancel)
	lapsed := s.watchSession(ctx, r, rbac.ResourceExec, rbac.ActionCreate, s.appObject(app))
	go func() {
		select {
		case why := <-lapsed:
			_, _ = t.Write([]byte("\r\n" + why + "\r\n"))
			cancel()
		case <-ctx.Done():
		}
	}()
	for _, shell := range shells {
		err = s.state.Exec(ctx, app, ref, container, []string{shell}, remotecommand.StreamOptions{
			Stdin: t, Stdout: t, Stderr: t, Tty: true, TerminalSizeQueue: t})
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil && ctx.Err() == nil {
		_, _ = t.Write([]byte("\r\nFailed to exec container: " + err.Error() + "\r\n"))
	}
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	return nil
}

// terminalRecheck is how often an open terminal checks its caller's
// session again.
var terminalRecheck = 10 * time.Second

// watchSession returns a channel told why the caller of r may no longer
// do action on object: the session expired, its token was revoked, or the
// policy changed. The session is checked every terminalRecheck, and at
// its expiry, until ctx ends; a terminal outlives none of these.
func (s *Server) watchSession(ctx context.Context, r *http.Request, resource rbac.Resource, action rbac.Action, object string) <-chan string {
	out := make(chan string, 1)
	go func() {
		var expiry <-chan time.Time
		if c, err := s.caller(r); err == nil && c.claims.ExpiresAt != nil {
			timer := time.NewTimer(time.Until(c.claims.ExpiresAt.Time))
			defer timer.Stop()
			expiry = timer.C
		}
		tick := time.NewTicker(terminalRecheck)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-expiry:
				out <- "The session has expired."
				return
			case <-tick.C:
			}
			c, err := s.caller(r)
			switch {
			case err != nil:
				out <- "The session is no longer valid."
				return
			case !c.can(resource, action, object):
				out <- "Permission to use this terminal has been withdrawn."
				return
			}
		}
	}()
	return out
}

// terminalSession joins a WebSocket to an exec's streams.
type terminalSession struct {
	conn    *websocket.Conn
	writeMu sync.Mutex
	stdin   *io.PipeReader
	in      *io.PipeWriter
	sizes   chan remotecommand.TerminalSize
}

func newTerminalSession(conn *websocket.Conn) *terminalSession {
	r, w := io.Pipe()
	return &terminalSession{conn: conn, stdin: r, in: w, sizes: make(chan remotecommand.TerminalSize, 4)}
}

// readLoop passes the browser's keystrokes to the shell's input and its
// window sizes to the terminal, until the socket closes; then it ends the
// session.
func (t *terminalSession) readLoop(done func()) {
	defer done()
	defer t.in.Close()
	defer close(t.sizes)
	for {
		var m terminalMessage
		if err := t.conn.ReadJSON(&m); err != nil {
			return
		}
		switch m.Operation {
		case "stdin":
			if _, err := t.in.Write([]byte(m.Data)); err != nil {
				return
			}
		case "resize":
			select {
			case t.sizes <- remotecommand.TerminalSize{Width: m.Cols, Height: m.Rows}:
			default: // the terminal has not taken the last size yet
			}
		}
	}
}

// Read is the shell's input.
func (t *terminalSession) Read(p []byte) (int, error) { return t.stdin.Read(p) }

// Write sends the shell's output to the browser.
func (t *terminalSession) Write(p []byte) (int, error) {
	data, err := json.Marshal(terminalMessage{Operation: "stdout", Data: string(p)})
	if err != nil {
		return 0, err
	}
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	if err := t.conn.WriteMessage(websocket.TextMessage, data); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Next is the terminal's next window size; nil when the session ended.
func (t *terminalSession) Next() *remotecommand.TerminalSize {
	size, ok := <-t.sizes
	if !ok {
		return nil
	}
	return &size
}

// terminalShells are the shells a terminal tries, in turn, until one
// starts: the one asked for when exec.shells (allowed) lists it, else
// every allowed one.
func terminalShells(allowed []string, asked string) []string {
	if slices.Contains(allowed, asked) {
		return []string{asked}
	}
	return allowed
}
