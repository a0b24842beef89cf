package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/api/capstanv1"
	"github.com/capstan-cd/capstan/internal/api/capstanv1/capstanv1connect"
	"github.com/capstan-cd/capstan/internal/settings"
)

// TestRPCOverGRPCAndGRPCWeb calls the protobuf API on the REST port: gRPC
// over TLS (HTTP/2 by ALPN), gRPC over plain HTTP/2 with --insecure, and
// gRPC-Web over HTTP/1.1; the answers, RBAC and errors are the REST API's.
func TestRPCOverGRPCAndGRPCWeb(t *testing.T) {
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
			hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
			ctx := context.Background()

			version, err := capstanv1connect.NewVersionServiceClient(hc, f.base, tc.opts...).Version(ctx, connect.NewRequest(&capstanv1.VersionRequest{}))
			if err != nil || version.Msg.GetObject().GetFields()["Version"].GetStringValue() == "" {
				t.Fatalf("Version: %v %v", err, version)
			}
			login, err := capstanv1connect.NewSessionServiceClient(hc, f.base, tc.opts...).Create(ctx,
				connect.NewRequest(&capstanv1.SessionCreateRequest{Username: "admin", Password: f.initialPassword()}))
			if err != nil || login.Msg.GetToken() == "" {
				t.Fatalf("login: %v", err)
			}
			apps := capstanv1connect.NewApplicationServiceClient(hc, f.base, tc.opts...)
			withToken := func(req interface{ Header() http.Header }) {
				req.Header().Set("Authorization", "Bearer "+login.Msg.GetToken())
			}

			app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "rpc", Namespace: f.ns},
				Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"},
					Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git", Path: "x"}}}
			if err := f.c.Create(ctx, app); err != nil {
				t.Fatal(err)
			}
			get := connect.NewRequest(&capstanv1.ApplicationQuery{Name: "rpc"})
			withToken(get)
			got, err := apps.Get(ctx, get)
			if err != nil || got.Msg.GetObject().GetFields()["spec"].GetStructValue().GetFields()["project"].GetStringValue() != "default" {
				t.Fatalf("Get: %v %v", err, got)
			}
			missing := connect.NewRequest(&capstanv1.ApplicationQuery{Name: "missing"})
			withToken(missing)
			if _, err := apps.Get(ctx, missing); connect.CodeOf(err) != connect.CodeNotFound {
				t.Errorf("Get of a missing app: %v, want NotFound", err)
			}
			if _, err := apps.List(ctx, connect.NewRequest(&capstanv1.ApplicationQuery{})); connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Errorf("List without a token: %v, want Unauthenticated", err)
			}
			canI := connect.NewRequest(&capstanv1.CanIRequest{Resource: "applications", Action: "sync", Subresource: "default/rpc"})
			withToken(canI)
			if answer, err := capstanv1connect.NewAccountServiceClient(hc, f.base, tc.opts...).CanI(ctx, canI); err != nil || answer.Msg.GetValue() != "yes" {
				t.Errorf("CanI: %v %v", err, answer)
			}

			// Watch: the current state first, then a change.
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			watch := connect.NewRequest(&capstanv1.ApplicationQuery{Name: "rpc"})
			withToken(watch)
			stream, err := apps.Watch(wctx, watch)
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			if !stream.Receive() || stream.Msg().GetType() != "ADDED" {
				t.Fatalf("first watch event: %v %v", stream.Err(), stream.Msg())
			}
			sync := connect.NewRequest(&capstanv1.ApplicationSyncRequest{Name: "rpc", DryRun: true})
			withToken(sync)
			if _, err := apps.Sync(ctx, sync); err != nil {
				t.Fatalf("Sync: %v", err)
			}
			if !stream.Receive() || stream.Msg().GetType() != "MODIFIED" || stream.Msg().GetApplication().GetFields()["operation"] == nil {
				t.Errorf("watch event after the sync: %v %v", stream.Err(), stream.Msg())
			}
			if _, err := apps.Sync(ctx, sync); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Errorf("a second sync while one is pending: %v, want InvalidArgument", err)
			}
		})
	}
}

// TestRPCManagesProjectsRepositoriesClustersAndTokens covers the RPCs that
// change settings, over gRPC.
func TestRPCManagesProjectsRepositoriesClustersAndTokens(t *testing.T) {
	f := start(t, true)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetUnencryptedHTTP2(true)
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	ctx := context.Background()
	token := f.adminToken()
	auth := func(req interface{ Header() http.Header }) {
		req.Header().Set("Authorization", "Bearer "+token)
	}
	obj := func(m map[string]any) *structpb.Struct {
		s, err := structpb.NewStruct(m)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	projects := capstanv1connect.NewProjectServiceClient(hc, f.base, connect.WithGRPC())
	create := connect.NewRequest(&capstanv1.ProjectCreateRequest{Project: obj(map[string]any{"metadata": map[string]any{"name": "team-rpc"},
		"spec": map[string]any{"roles": []any{map[string]any{"name": "ci", "policies": []any{"p, proj:team-rpc:ci, applications, get, team-rpc/*, allow"}}}}})})
	auth(create)
	if _, err := projects.Create(ctx, create); err != nil {
		t.Fatalf("project Create: %v", err)
	}
	roleToken := connect.NewRequest(&capstanv1.ProjectTokenCreateRequest{Project: "team-rpc", Role: "ci", Id: "rpc"})
	auth(roleToken)
	if resp, err := projects.CreateToken(ctx, roleToken); err != nil || resp.Msg.GetToken() == "" {
		t.Fatalf("project CreateToken: %v", err)
	}

	repos := capstanv1connect.NewRepositoryServiceClient(hc, f.base, connect.WithGRPC())
	addRepo := connect.NewRequest(&capstanv1.RepoCreateRequest{Repo: obj(map[string]any{"repo": "https://charts.example.com", "type": "helm", "name": "ex", "password": "p4ss"})})
	auth(addRepo)
	if _, err := repos.Create(ctx, addRepo); err != nil {
		t.Fatalf("repository Create: %v", err)
	}
	listRepos := connect.NewRequest(&capstanv1.NameQuery{})
	auth(listRepos)
	if list, err := repos.List(ctx, listRepos); err != nil || len(list.Msg.GetObject().GetFields()["items"].GetListValue().GetValues()) != 1 ||
		strings.Contains(list.Msg.GetObject().String(), "p4ss") {
		t.Errorf("repository List: %v %v", err, list)
	}

	clusters := capstanv1connect.NewClusterServiceClient(hc, f.base, connect.WithGRPC())
	addCluster := connect.NewRequest(&capstanv1.ClusterCreateRequest{Cluster: obj(map[string]any{"server": "https://rpc.example.com:6443", "name": "rpc",
		"config": map[string]any{"bearerToken": "t0ken"}})})
	auth(addCluster)
	if _, err := clusters.Create(ctx, addCluster); err != nil {
		t.Fatalf("cluster Create: %v", err)
	}
	getCluster := connect.NewRequest(&capstanv1.ClusterQuery{Server: "https://rpc.example.com:6443"})
	auth(getCluster)
	if got, err := clusters.Get(ctx, getCluster); err != nil || got.Msg.GetObject().GetFields()["name"].GetStringValue() != "rpc" || strings.Contains(got.Msg.GetObject().String(), "t0ken") {
		t.Errorf("cluster Get: %v %v", err, got)
	}
	delCluster := connect.NewRequest(&capstanv1.ClusterQuery{Server: "https://rpc.example.com:6443"})
	auth(delCluster)
	if _, err := clusters.Delete(ctx, delCluster); err != nil {
		t.Errorf("cluster Delete: %v", err)
	}

	if err := f.c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.ci": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	accounts := capstanv1connect.NewAccountServiceClient(hc, f.base, connect.WithGRPC())
	newToken := connect.NewRequest(&capstanv1.AccountTokenCreateRequest{Name: "ci", Id: "k1"})
	auth(newToken)
	key, err := accounts.CreateToken(ctx, newToken)
	if err != nil || key.Msg.GetToken() == "" {
		t.Fatalf("account CreateToken: %v", err)
	}
	revoke := connect.NewRequest(&capstanv1.AccountTokenDeleteRequest{Name: "ci", Id: "k1"})
	auth(revoke)
	if _, err := accounts.DeleteToken(ctx, revoke); err != nil {
		t.Errorf("account DeleteToken: %v", err)
	}
	info := connect.NewRequest(&capstanv1.UserInfoRequest{})
	info.Header().Set("Authorization", "Bearer "+key.Msg.GetToken())
	if got, err := capstanv1connect.NewSessionServiceClient(hc, f.base, connect.WithGRPC()).GetUserInfo(ctx, info); err != nil || got.Msg.GetObject().GetFields()["loggedIn"].GetBoolValue() {
		t.Errorf("a revoked API key is still logged in: %v %v", err, got)
	}
}
