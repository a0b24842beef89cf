package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/api/capstanv1"
	"github.com/capstan-cd/capstan/internal/api/capstanv1/capstanv1connect"
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
