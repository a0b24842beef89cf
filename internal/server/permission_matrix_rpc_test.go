package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/capstan-cd/capstan/internal/argoapi"
)

// rpcMatrix calls every RPC method as every caller: a method with a REST
// binding gets the request of its route's first row, turned into the
// method's message, and must answer that row's status as its RPC code; a
// method Capstan does not serve must answer Unimplemented to everyone; a
// method whose route has no row fails the test.
func (m *matrix) rpcMatrix(t *testing.T, rows []matrixRow) {
	schema, err := argoapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	methods, err := schema.Methods()
	if err != nil {
		t.Fatal(err)
	}
	byPattern := map[string]matrixRow{}
	for _, row := range rows {
		req, _ := http.NewRequest(row.method, row.path, nil)
		if _, p := m.srv.mux.Handler(req); byPattern[p].method == "" {
			byPattern[p] = row
		}
	}
	rpc := newRPCClient(t, &http.Client{Timeout: 30 * time.Second}, m.base, connect.WithGRPCWeb())
	record := os.Getenv("CAPSTAN_MATRIX_RECORD") != ""
	calls, unimplemented := 0, 0
	for _, md := range methods {
		procedure := string(md.Parent().FullName()) + "/" + string(md.Name())
		bindings := argoapi.BindingsOf(md)
		if len(bindings) == 0 || md.IsStreamingClient() {
			if md.IsStreamingClient() && len(bindings) > 0 {
				continue // manifests with files: its REST route's row stands for it
			}
			unimplemented++
			for who := range callers {
				rpc.token = m.tokens[who]
				if code := m.callRPC(rpc, md, "{}"); code != connect.CodeUnimplemented {
					t.Errorf("%s as %s: %v, want Unimplemented", procedure, callerNames[who], code)
				}
			}
			continue
		}
		row, binding, ok := rowOf(m, byPattern, bindings)
		if !ok {
			req, _ := http.NewRequest(bindings[0].Method, templateParam.ReplaceAllString(bindings[0].Path, "x"), nil)
			if _, p := m.srv.mux.Handler(req); p != "" && p != "/" {
				if status, _ := m.probe(req.Method, req.URL.Path, "", m.tokens[asAdmin]); status == http.StatusNotImplemented {
					unimplemented++
					continue
				}
			}
			t.Errorf("RPC %s (%s %s) has no row in the permission matrix", procedure, bindings[0].Method, bindings[0].Path)
			continue
		}
		msg, err := messageOf(md.Input(), row, binding)
		if err != nil {
			t.Errorf("RPC %s: the request of row %s %s: %v", procedure, row.method, row.path, err)
			continue
		}
		var got [callers]connect.Code
		for who := range callers {
			rpc.token = m.tokens[who]
			got[who] = m.callRPC(rpc, md, msg)
			calls++
			if want := codeOfStatus(row.want[who]); got[who] != want && !record {
				t.Errorf("RPC %s as %s (row %s %s): %v, want %v", procedure, callerNames[who], row.method, row.path, got[who], want)
			}
			if row.after != nil {
				row.after()
			}
		}
		if record {
			fmt.Printf("RPC %s got %v want %v\n", procedure, got, row.want)
		}
	}
	t.Logf("RPC matrix: %d methods × %d callers = %d calls; %d methods unimplemented", calls/int(callers), callers, calls, unimplemented)
}

// rowOf finds the row of the route one of the bindings leads to.
func rowOf(m *matrix, byPattern map[string]matrixRow, bindings []argoapi.Binding) (matrixRow, argoapi.Binding, bool) {
	for _, b := range bindings {
		req, _ := http.NewRequest(b.Method, templateParam.ReplaceAllString(b.Path, "x"), nil)
		if _, p := m.srv.mux.Handler(req); p != "" {
			if row, ok := byPattern[p]; ok && row.method == b.Method {
				return row, b, true
			}
		}
	}
	return matrixRow{}, argoapi.Binding{}, false
}

// messageOf turns a row's REST call into the method's request as JSON:
// the path's fields from the path, the query's parameters, the body where
// the binding puts it.
func messageOf(input protoreflect.MessageDescriptor, row matrixRow, b argoapi.Binding) (string, error) {
	msg := map[string]any{}
	set := func(dotted string, v any) {
		parts := strings.Split(dotted, ".")
		cur := msg
		for _, p := range parts[:len(parts)-1] {
			next, _ := cur[p].(map[string]any)
			if next == nil {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
		cur[parts[len(parts)-1]] = v
	}
	path, query, _ := strings.Cut(row.path, "?")
	tmpl := strings.Split(strings.Trim(b.Path, "/"), "/")
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, t := range tmpl {
		sub := templateParam.FindStringSubmatch(t)
		if sub == nil {
			continue
		}
		if i >= len(segs) {
			return "", fmt.Errorf("path %s is shorter than %s", path, b.Path)
		}
		v := segs[i]
		if sub[2] == "=**" {
			v = strings.Join(segs[i:], "/")
		}
		unescaped, err := url.PathUnescape(v)
		if err != nil {
			return "", err
		}
		set(sub[1], unescaped)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", err
	}
	for k, vs := range q {
		if fd := fieldOf(input, k); fd != nil && fd.IsList() {
			set(k, vs)
		} else {
			set(k, vs[0])
		}
	}
	if row.body != "" && b.Body != "" {
		var body any
		if err := json.Unmarshal([]byte(row.body), &body); err != nil {
			return "", err
		}
		obj, isObject := body.(map[string]any)
		fd := fieldOf(input, b.Body)
		switch {
		case b.Body == "*" && !isObject:
			return "", errors.New("the body is not an object")
		case b.Body == "*", isObject && fd != nil && fd.Message() == nil:
			// The whole request, or (a scalar body field, such as
			// ValidateAccess's repo) the other fields as Argo CD's UI
			// sends them.
			for k, v := range obj {
				msg[k] = v
			}
		case isObject:
			inner, _ := msg[b.Body].(map[string]any)
			if inner == nil {
				inner = map[string]any{}
			}
			for k, v := range obj {
				inner[k] = v
			}
			set(b.Body, inner)
		default:
			set(b.Body, body)
		}
	}
	data, err := json.Marshal(msg)
	return string(data), err
}

// fieldOf finds the field a dotted name (json or proto) names.
func fieldOf(md protoreflect.MessageDescriptor, dotted string) protoreflect.FieldDescriptor {
	var fd protoreflect.FieldDescriptor
	for _, part := range strings.Split(dotted, ".") {
		if md == nil {
			return nil
		}
		if fd = md.Fields().ByJSONName(part); fd == nil {
			fd = md.Fields().ByName(protoreflect.Name(part))
		}
		if fd == nil {
			return nil
		}
		md = fd.Message()
	}
	return fd
}

// callRPC calls a method (a server stream: until its first message, or a
// moment) and returns its code.
func (m *matrix) callRPC(rpc *rpcClient, md protoreflect.MethodDescriptor, reqJSON string) connect.Code {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := rpc.request(md, reqJSON)
	if !md.IsStreamingServer() {
		_, err := rpc.client(md).CallUnary(ctx, req)
		return codeOf(err)
	}
	sctx, scancel := context.WithTimeout(ctx, time.Second)
	defer scancel()
	stream, err := rpc.client(md).CallServerStream(sctx, req)
	if err == nil {
		defer stream.Close()
		if stream.Receive() {
			return 0
		}
		err = stream.Err()
	}
	if c := codeOf(err); c != connect.CodeDeadlineExceeded && c != connect.CodeCanceled {
		return c
	}
	return 0 // open and quiet: allowed
}

func codeOf(err error) connect.Code {
	if err == nil {
		return 0
	}
	return connect.CodeOf(err)
}

// codeOfStatus is the RPC code of a REST status, 0 for success.
func codeOfStatus(status int) connect.Code {
	if status < 300 {
		return 0
	}
	if c, ok := rpcCodes[status]; ok {
		return c
	}
	return connect.CodeInternal
}
