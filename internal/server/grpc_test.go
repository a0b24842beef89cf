package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/argoapi"
	"github.com/capstan-cd/capstan/internal/metrics"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// rpcClient calls Argo CD's API methods with dynamic messages written as
// the REST API's JSON.
type rpcClient struct {
	t      *testing.T
	hc     *http.Client
	base   string
	opts   []connect.ClientOption
	token  string
	schema *argoapi.Schema
}

func newRPCClient(t *testing.T, hc *http.Client, base string, opts ...connect.ClientOption) *rpcClient {
	t.Helper()
	schema, err := argoapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	return &rpcClient{t: t, hc: hc, base: base, opts: opts, schema: schema}
}

// method finds "service.Service/Method".
func (c *rpcClient) method(procedure string) protoreflect.MethodDescriptor {
	c.t.Helper()
	service, name, _ := strings.Cut(procedure, "/")
	sd, err := c.schema.Service(protoreflect.FullName(service))
	if err != nil || sd.Methods().ByName(protoreflect.Name(name)) == nil {
		c.t.Fatalf("no method %s: %v", procedure, err)
	}
	return sd.Methods().ByName(protoreflect.Name(name))
}

func (c *rpcClient) client(md protoreflect.MethodDescriptor) *connect.Client[dynamicpb.Message, dynamicpb.Message] {
	out := md.Output()
	opts := append([]connect.ClientOption{connect.WithSchema(md), connect.WithResponseInitializer(func(_ connect.Spec, msg any) error {
		*msg.(*dynamicpb.Message) = *dynamicpb.NewMessage(out)
		return nil
	})}, c.opts...)
	return connect.NewClient[dynamicpb.Message, dynamicpb.Message](c.hc, c.base+"/"+string(md.Parent().FullName())+"/"+string(md.Name()), opts...)
}

func (c *rpcClient) request(md protoreflect.MethodDescriptor, reqJSON string) *connect.Request[dynamicpb.Message] {
	c.t.Helper()
	msg := dynamicpb.NewMessage(md.Input())
	if err := argoapi.UnmarshalJSON([]byte(reqJSON), msg); err != nil {
		c.t.Fatalf("request of %s: %v", md.FullName(), err)
	}
	req := connect.NewRequest(msg)
	if c.token != "" {
		req.Header().Set("Authorization", "Bearer "+c.token)
	}
	return req
}

// call makes a unary call and decodes its answer into out (nil: ignored).
func (c *rpcClient) call(procedure, reqJSON string, out any) error {
	c.t.Helper()
	md := c.method(procedure)
	resp, err := c.client(md).CallUnary(context.Background(), c.request(md, reqJSON))
	if err != nil || out == nil {
		return err
	}
	data, err := argoapi.MarshalJSON(resp.Msg)
	if err != nil {
		c.t.Fatal(err)
	}
	return json.Unmarshal(data, out)
}

// TestRPCOverGRPCAndGRPCWeb: Argo CD's API answers over gRPC with TLS,
// gRPC over h2c and gRPC-Web over HTTP/1.1: login, get, a missing app's
// NotFound, a call without a token refused, can-i, and a watch that sees
// a sync start.
func TestRPCOverGRPCAndGRPCWeb(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	for _, tc := range []struct {
		name     string
		insecure bool
		opts     []connect.ClientOption
	}{
		{"grpc over TLS", false, []connect.ClientOption{connect.WithGRPC()}},
		{"grpc over h2c", true, []connect.ClientOption{connect.WithGRPC()}},
		{"grpc-web over HTTP/1.1", false, []connect.ClientOption{connect.WithGRPCWeb()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := start(t, tc.insecure)
			base, ok := f.client.Transport.(*http.Transport)
			if !ok { // plain HTTP: the default transport
				base = http.DefaultTransport.(*http.Transport)
			}
			tr := base.Clone()
			tr.Protocols = new(http.Protocols)
			switch {
			case tc.insecure:
				tr.Protocols.SetUnencryptedHTTP2(true)
			case tc.name == "grpc over TLS":
				tr.Protocols.SetHTTP2(true)
			default:
				tr.Protocols.SetHTTP1(true)
				tr.TLSClientConfig = tr.TLSClientConfig.Clone()
				tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
			}
			rpc := newRPCClient(t, &http.Client{Transport: tr, Timeout: 30 * time.Second}, f.base, tc.opts...)
			ctx := context.Background()

			var version struct{ Version string }
			if err := rpc.call("version.VersionService/Version", `{}`, &version); err != nil || version.Version == "" {
				t.Fatalf("Version: %v %v", err, version)
			}
			var login struct{ Token string }
			if err := rpc.call("session.SessionService/Create", `{"username":"admin","password":"`+f.initialPassword()+`"}`, &login); err != nil || login.Token == "" {
				t.Fatalf("login: %v", err)
			}
			if err := rpc.call("application.ApplicationService/List", `{}`, nil); connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Errorf("List without a token: %v, want Unauthenticated", err)
			}
			rpc.token = login.Token

			app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "rpc", Namespace: f.ns},
				Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"},
					Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git", Path: "x"}}}
			if err := f.c.Create(ctx, app); err != nil {
				t.Fatal(err)
			}
			var got v1alpha1.Application
			if err := rpc.call("application.ApplicationService/Get", `{"name":"rpc"}`, &got); err != nil || got.Spec.Project != "default" {
				t.Fatalf("Get: %v %+v", err, got.Spec)
			}
			if err := rpc.call("application.ApplicationService/Get", `{"name":"missing"}`, nil); connect.CodeOf(err) != connect.CodeNotFound {
				t.Errorf("Get of a missing app: %v, want NotFound", err)
			}
			var canI struct{ Value string }
			if err := rpc.call("account.AccountService/CanI", `{"resource":"applications","action":"sync","subresource":"default/rpc"}`, &canI); err != nil || canI.Value != "yes" {
				t.Errorf("CanI: %v %v", err, canI)
			}

			// Watch: the current state first, then a change.
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			watch := rpc.method("application.ApplicationService/Watch")
			stream, err := rpc.client(watch).CallServerStream(wctx, rpc.request(watch, `{"name":"rpc"}`))
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			event := func() (string, *v1alpha1.Application) {
				if !stream.Receive() {
					t.Fatalf("watch ended: %v", stream.Err())
				}
				data, _ := argoapi.MarshalJSON(stream.Msg())
				var ev struct {
					Type        string
					Application *v1alpha1.Application
				}
				_ = json.Unmarshal(data, &ev)
				return ev.Type, ev.Application
			}
			if typ, _ := event(); typ != "ADDED" {
				t.Fatalf("first watch event: %s", typ)
			}
			if err := rpc.call("application.ApplicationService/Sync", `{"name":"rpc","dryRun":true}`, nil); err != nil {
				t.Fatalf("Sync: %v", err)
			}
			if typ, a := event(); typ != "MODIFIED" || a == nil || a.Operation == nil {
				t.Errorf("watch event after the sync: %s %+v", typ, a)
			}
			if err := rpc.call("application.ApplicationService/Sync", `{"name":"rpc","dryRun":true}`, nil); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Errorf("a second sync while one is pending: %v, want InvalidArgument", err)
			}
		})
	}
}

// TestRPCManagesProjectsRepositoriesClustersAndTokens covers the methods
// that change settings, over gRPC (h2c).
func TestRPCManagesProjectsRepositoriesClustersAndTokens(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetUnencryptedHTTP2(true)
	rpc := newRPCClient(t, &http.Client{Transport: tr, Timeout: 30 * time.Second}, f.base, connect.WithGRPC())
	rpc.token = f.adminToken()
	ctx := context.Background()

	if err := rpc.call("project.ProjectService/Create", `{"project":{"metadata":{"name":"team-rpc"},"spec":{"roles":[{"name":"ci","policies":["p, proj:team-rpc:ci, applications, get, team-rpc/*, allow"]}]}}}`, nil); err != nil {
		t.Fatalf("project Create: %v", err)
	}
	var roleToken struct{ Token string }
	if err := rpc.call("project.ProjectService/CreateToken", `{"project":"team-rpc","role":"ci","id":"rpc"}`, &roleToken); err != nil || roleToken.Token == "" {
		t.Fatalf("project CreateToken: %v", err)
	}
	if err := rpc.call("repository.RepositoryService/CreateRepository", `{"repo":{"repo":"https://charts.example.com","type":"helm","name":"ex","password":"p4ss"}}`, nil); err != nil {
		t.Fatalf("repository Create: %v", err)
	}
	var repos struct{ Items []map[string]any }
	if err := rpc.call("repository.RepositoryService/ListRepositories", `{}`, &repos); err != nil || len(repos.Items) != 1 || strings.Contains(fmtJSON(repos), "p4ss") {
		t.Errorf("repository List: %v %v", err, repos)
	}
	if err := rpc.call("cluster.ClusterService/Create", `{"cluster":{"server":"https://rpc.example.com:6443","name":"rpc","config":{"bearerToken":"t0ken"}}}`, nil); err != nil {
		t.Fatalf("cluster Create: %v", err)
	}
	var cl map[string]any
	if err := rpc.call("cluster.ClusterService/Get", `{"server":"https://rpc.example.com:6443"}`, &cl); err != nil || cl["name"] != "rpc" || strings.Contains(fmtJSON(cl), "t0ken") {
		t.Errorf("cluster Get: %v %v", err, cl)
	}
	if err := rpc.call("cluster.ClusterService/Delete", `{"server":"https://rpc.example.com:6443"}`, nil); err != nil {
		t.Errorf("cluster Delete: %v", err)
	}

	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.ci": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	var key struct{ Token string }
	if err := rpc.call("account.AccountService/CreateToken", `{"name":"ci","id":"k1"}`, &key); err != nil || key.Token == "" {
		t.Fatalf("account CreateToken: %v", err)
	}
	if err := rpc.call("account.AccountService/DeleteToken", `{"name":"ci","id":"k1"}`, nil); err != nil {
		t.Errorf("account DeleteToken: %v", err)
	}
	rpc.token = key.Token
	var info struct{ LoggedIn bool }
	if err := rpc.call("session.SessionService/GetUserInfo", `{}`, &info); err != nil || info.LoggedIn {
		t.Errorf("a revoked API key is still logged in: %v %v", err, info)
	}
}

func fmtJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// TestRPCMetrics: calls of Argo CD's gRPC API are counted under
// go-grpc-middleware's names, as Argo CD's API server counts them: by
// type, service and method, with the gRPC code and the messages of a
// stream; with the handling time histogram on (ARGOCD_ENABLE_GRPC_TIME_HISTOGRAM),
// how long each took.
func TestRPCMetrics(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	counts := metrics.NewServer("v0.0.0-test")
	counts.EnableHandlingTime()
	f := startWith(t, Options{Insecure: true, Metrics: counts})
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetUnencryptedHTTP2(true)
	rpc := newRPCClient(t, &http.Client{Transport: tr, Timeout: 30 * time.Second}, f.base, connect.WithGRPC())
	if err := rpc.call("version.VersionService/Version", `{}`, nil); err != nil {
		t.Fatal(err)
	}
	if err := rpc.call("application.ApplicationService/List", `{}`, nil); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("List without a token: %v", err)
	}
	var login struct{ Token string }
	if err := rpc.call("session.SessionService/Create", `{"username":"admin","password":"`+f.initialPassword()+`"}`, &login); err != nil {
		t.Fatal(err)
	}
	rpc.token = login.Token
	if err := rpc.call("application.ApplicationService/Get", `{"name":"missing"}`, nil); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("Get of a missing app: %v", err)
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "watched", Namespace: f.ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"},
			Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git", Path: "x"}}}
	if err := f.c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	watch := rpc.method("application.ApplicationService/Watch")
	stream, err := rpc.client(watch).CallServerStream(ctx, rpc.request(watch, `{"name":"watched"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !stream.Receive() {
		t.Fatalf("watch: %v", stream.Err())
	}
	cancel()
	_ = stream.Close()
	want := []string{
		`grpc_server_handled_total{grpc_code="OK",grpc_method="Version",grpc_service="version.VersionService",grpc_type="unary"} 1`,
		`grpc_server_handled_total{grpc_code="Unauthenticated",grpc_method="List",grpc_service="application.ApplicationService",grpc_type="unary"} 1`,
		`grpc_server_handled_total{grpc_code="NotFound",grpc_method="Get",grpc_service="application.ApplicationService",grpc_type="unary"} 1`,
		`grpc_server_started_total{grpc_method="Create",grpc_service="session.SessionService",grpc_type="unary"} 1`,
		`grpc_server_msg_received_total{grpc_method="Watch",grpc_service="application.ApplicationService",grpc_type="server_stream"} 1`,
		`grpc_server_handling_seconds_count{grpc_method="Version",grpc_service="version.VersionService",grpc_type="unary"} 1`,
	}
	eventually.String(t, "the gRPC metrics", func() string {
		page := scrape(t, counts.Handler())
		for _, w := range want {
			if !strings.Contains(page, w+"\n") {
				return "no " + w + " in\n" + grepLines(page, "grpc_server_")
			}
		}
		if !strings.Contains(page, `grpc_server_msg_sent_total{grpc_method="Watch",grpc_service="application.ApplicationService",grpc_type="server_stream"}`) {
			return "no messages sent by Watch"
		}
		return ""
	})
}
