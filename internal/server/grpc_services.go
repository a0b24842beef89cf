package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/capstan-cd/capstan/internal/api/capstanv1"
)

// The RPC services, one type per service (several have a List of the
// same signature), each method naming the REST call it is.

type versionRPC struct{ *rpcBridge }

func (v versionRPC) Version(ctx context.Context, req *connect.Request[capstanv1.VersionRequest]) (*connect.Response[capstanv1.Object], error) {
	return v.object(ctx, req.Header(), "GET", "/api/version", nil)
}

type sessionRPC struct{ *rpcBridge }

func (s sessionRPC) Create(ctx context.Context, req *connect.Request[capstanv1.SessionCreateRequest]) (*connect.Response[capstanv1.SessionResponse], error) {
	st, err := s.call(ctx, req.Header(), "POST", "/api/v1/session", map[string]string{"username": req.Msg.GetUsername(), "password": req.Msg.GetPassword()})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&capstanv1.SessionResponse{Token: st.GetFields()["token"].GetStringValue()}), nil
}

func (s sessionRPC) GetUserInfo(ctx context.Context, req *connect.Request[capstanv1.UserInfoRequest]) (*connect.Response[capstanv1.Object], error) {
	return s.object(ctx, req.Header(), "GET", "/api/v1/session/userinfo", nil)
}

type settingsRPC struct{ *rpcBridge }

func (s settingsRPC) Get(ctx context.Context, req *connect.Request[capstanv1.SettingsQuery]) (*connect.Response[capstanv1.Object], error) {
	return s.object(ctx, req.Header(), "GET", "/api/v1/settings", nil)
}

type applicationRPC struct{ *rpcBridge }

func appQuery(q *capstanv1.ApplicationQuery) url.Values {
	v := url.Values{}
	for k, val := range map[string]string{"name": q.GetName(), "selector": q.GetSelector(), "appNamespace": q.GetAppNamespace(), "resourceVersion": q.GetResourceVersion()} {
		if val != "" {
			v.Set(k, val)
		}
	}
	for _, p := range q.GetProjects() {
		v.Add("projects", p)
	}
	return v
}

// appPath is an Application's REST path, with its namespace as a query.
func appPath(name, namespace, suffix string) string {
	return appSubPath(name, namespace, suffix, url.Values{})
}

func (a applicationRPC) List(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "GET", withQuery("/api/v1/applications", appQuery(req.Msg)), nil)
}

func (a applicationRPC) Get(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "GET", appPath(req.Msg.GetName(), req.Msg.GetAppNamespace(), ""), nil)
}

func (a applicationRPC) Create(ctx context.Context, req *connect.Request[capstanv1.Object]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "POST", "/api/v1/applications", req.Msg.GetObject().AsMap())
}

func (a applicationRPC) Sync(ctx context.Context, req *connect.Request[capstanv1.ApplicationSyncRequest]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	return a.object(ctx, req.Header(), "POST", appPath(m.GetName(), m.GetAppNamespace(), "/sync"),
		map[string]any{"revision": m.GetRevision(), "prune": m.GetPrune(), "dryRun": m.GetDryRun()})
}

func (a applicationRPC) Rollback(ctx context.Context, req *connect.Request[capstanv1.ApplicationRollbackRequest]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	return a.object(ctx, req.Header(), "POST", appPath(m.GetName(), m.GetAppNamespace(), "/rollback"),
		map[string]any{"id": m.GetId(), "prune": m.GetPrune(), "dryRun": m.GetDryRun()})
}

func (a applicationRPC) TerminateOperation(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "DELETE", appPath(req.Msg.GetName(), req.Msg.GetAppNamespace(), "/operation"), nil)
}

func (a applicationRPC) Delete(ctx context.Context, req *connect.Request[capstanv1.ApplicationDeleteRequest]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	q := url.Values{}
	if m.Cascade != nil {
		q.Set("cascade", strconv.FormatBool(m.GetCascade()))
	}
	if m.GetPropagationPolicy() != "" {
		q.Set("propagationPolicy", m.GetPropagationPolicy())
	}
	if m.GetAppNamespace() != "" {
		q.Set("appNamespace", m.GetAppNamespace())
	}
	return a.object(ctx, req.Header(), "DELETE", withQuery("/api/v1/applications/"+url.PathEscape(m.GetName()), q), nil)
}

func (a applicationRPC) ManagedResources(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "GET", appPath(req.Msg.GetName(), req.Msg.GetAppNamespace(), "/managed-resources"), nil)
}

func (a applicationRPC) ResourceTree(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "GET", appPath(req.Msg.GetName(), req.Msg.GetAppNamespace(), "/resource-tree"), nil)
}

// Watch relays the event stream of GET /api/v1/stream/applications.
func (a applicationRPC) Watch(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery], stream *connect.ServerStream[capstanv1.ApplicationWatchEvent]) error {
	r, err := http.NewRequestWithContext(ctx, "GET", withQuery("/api/v1/stream/applications", appQuery(req.Msg)), nil)
	if err != nil {
		return connect.NewError(connect.CodeInvalidArgument, err)
	}
	if v := req.Header().Get("Authorization"); v != "" {
		r.Header.Set("Authorization", v)
	}
	w := &eventRelay{recorder: recorder{header: http.Header{}, status: http.StatusOK}, send: func(data []byte) error {
		var msg struct {
			Result struct {
				Type        string         `json:"type"`
				Application map[string]any `json:"application"`
			} `json:"result"`
		}
		if err := json.Unmarshal(data, &msg); err != nil {
			return err
		}
		app, err := structpb.NewStruct(msg.Result.Application)
		if err != nil {
			return err
		}
		return stream.Send(&capstanv1.ApplicationWatchEvent{Type: msg.Result.Type, Application: app})
	}}
	a.s.mux.ServeHTTP(w, r)
	if w.status >= 300 {
		_, err := answerOf(w.status, w.body.Bytes())
		return err
	}
	return w.err
}

// eventRelay is a ResponseWriter that hands each Server-Sent Events
// message's data to send as it is written.
type eventRelay struct {
	recorder
	send    func([]byte) error
	pending []byte
	err     error
}

func (e *eventRelay) Write(p []byte) (int, error) {
	if e.status >= 300 {
		return e.recorder.Write(p)
	}
	if e.err != nil {
		return 0, e.err
	}
	e.pending = append(e.pending, p...)
	for {
		i := bytes.Index(e.pending, []byte("\n\n"))
		if i < 0 {
			return len(p), nil
		}
		msg := e.pending[:i]
		e.pending = e.pending[i+2:]
		if data, ok := bytes.CutPrefix(msg, []byte("data: ")); ok {
			if e.err = e.send(data); e.err != nil {
				return 0, e.err
			}
		}
	}
}

// Flush makes the stream handler treat the relay as a streaming writer.
func (e *eventRelay) Flush() {}

type projectRPC struct{ *rpcBridge }

func (p projectRPC) List(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return p.object(ctx, req.Header(), "GET", "/api/v1/projects", nil)
}

func (p projectRPC) Get(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return p.object(ctx, req.Header(), "GET", "/api/v1/projects/"+url.PathEscape(req.Msg.GetName()), nil)
}

type repositoryRPC struct{ *rpcBridge }

func (r repositoryRPC) List(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return r.object(ctx, req.Header(), "GET", "/api/v1/repositories", nil)
}

type clusterRPC struct{ *rpcBridge }

func (c clusterRPC) List(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return c.object(ctx, req.Header(), "GET", "/api/v1/clusters", nil)
}

type accountRPC struct{ *rpcBridge }

func (a accountRPC) CanI(ctx context.Context, req *connect.Request[capstanv1.CanIRequest]) (*connect.Response[capstanv1.CanIResponse], error) {
	m := req.Msg
	st, err := a.call(ctx, req.Header(), "GET", fmt.Sprintf("/api/v1/account/can-i/%s/%s/%s", url.PathEscape(m.GetResource()), url.PathEscape(m.GetAction()), m.GetSubresource()), nil)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&capstanv1.CanIResponse{Value: st.GetFields()["value"].GetStringValue()}), nil
}

func (a accountRPC) ListAccounts(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "GET", "/api/v1/account", nil)
}

func (s sessionRPC) Delete(ctx context.Context, req *connect.Request[capstanv1.SessionDeleteRequest]) (*connect.Response[capstanv1.Object], error) {
	return s.object(ctx, req.Header(), "DELETE", "/api/v1/session", nil)
}

func (a applicationRPC) Update(ctx context.Context, req *connect.Request[capstanv1.Object]) (*connect.Response[capstanv1.Object], error) {
	obj := req.Msg.GetObject().AsMap()
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	namespace, _ := meta["namespace"].(string)
	return a.object(ctx, req.Header(), "PUT", appPath(name, namespace, ""), obj)
}

func (a applicationRPC) UpdateSpec(ctx context.Context, req *connect.Request[capstanv1.ApplicationUpdateSpecRequest]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	return a.object(ctx, req.Header(), "PUT", appPath(m.GetName(), m.GetAppNamespace(), "/spec"), m.GetSpec().AsMap())
}

func (a applicationRPC) Patch(ctx context.Context, req *connect.Request[capstanv1.ApplicationPatchRequest]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	return a.object(ctx, req.Header(), "PATCH", appPath(m.GetName(), m.GetAppNamespace(), ""), map[string]string{"patch": m.GetPatch(), "patchType": m.GetPatchType()})
}

// appSubPath is an Application's REST path with a suffix and query.
func appSubPath(name, namespace, suffix string, q url.Values) string {
	if namespace != "" {
		q.Set("appNamespace", namespace)
	}
	return withQuery("/api/v1/applications/"+url.PathEscape(name)+suffix, q)
}

func (a applicationRPC) GetManifests(ctx context.Context, req *connect.Request[capstanv1.ApplicationManifestQuery]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	q := url.Values{}
	if m.GetRevision() != "" {
		q.Set("revision", m.GetRevision())
	}
	return a.object(ctx, req.Header(), "GET", appSubPath(m.GetName(), m.GetAppNamespace(), "/manifests", q), nil)
}

func (a applicationRPC) GetResource(ctx context.Context, req *connect.Request[capstanv1.ApplicationResourceRequest]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	q := url.Values{"namespace": {m.GetNamespace()}, "resourceName": {m.GetResourceName()}, "version": {m.GetVersion()}, "group": {m.GetGroup()}, "kind": {m.GetKind()}}
	return a.object(ctx, req.Header(), "GET", appSubPath(m.GetName(), m.GetAppNamespace(), "/resource", q), nil)
}

func (a applicationRPC) ListResourceEvents(ctx context.Context, req *connect.Request[capstanv1.ApplicationResourceEventsQuery]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	q := url.Values{}
	for k, v := range map[string]string{"resourceNamespace": m.GetResourceNamespace(), "resourceName": m.GetResourceName(), "resourceUID": m.GetResourceUid()} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return a.object(ctx, req.Header(), "GET", appSubPath(m.GetName(), m.GetAppNamespace(), "/events", q), nil)
}

func projPath(name string) string { return "/api/v1/projects/" + url.PathEscape(name) }

func (p projectRPC) Create(ctx context.Context, req *connect.Request[capstanv1.ProjectCreateRequest]) (*connect.Response[capstanv1.Object], error) {
	return p.object(ctx, req.Header(), "POST", "/api/v1/projects", map[string]any{"project": req.Msg.GetProject().AsMap(), "upsert": req.Msg.GetUpsert()})
}

func (p projectRPC) Update(ctx context.Context, req *connect.Request[capstanv1.Object]) (*connect.Response[capstanv1.Object], error) {
	obj := req.Msg.GetObject().AsMap()
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return p.object(ctx, req.Header(), "PUT", projPath(name), map[string]any{"project": obj})
}

func (p projectRPC) Delete(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return p.object(ctx, req.Header(), "DELETE", projPath(req.Msg.GetName()), nil)
}

// token makes a REST call that answers {"token": ...}.
func (b *rpcBridge) token(ctx context.Context, in http.Header, path string, body any) (*connect.Response[capstanv1.TokenResponse], error) {
	st, err := b.call(ctx, in, "POST", path, body)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&capstanv1.TokenResponse{Token: st.GetFields()["token"].GetStringValue()}), nil
}

func (p projectRPC) CreateToken(ctx context.Context, req *connect.Request[capstanv1.ProjectTokenCreateRequest]) (*connect.Response[capstanv1.TokenResponse], error) {
	m := req.Msg
	return p.token(ctx, req.Header(), projPath(m.GetProject())+"/roles/"+url.PathEscape(m.GetRole())+"/token", map[string]any{"expiresIn": m.GetExpiresIn(), "id": m.GetId()})
}

func (p projectRPC) DeleteToken(ctx context.Context, req *connect.Request[capstanv1.ProjectTokenDeleteRequest]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	path := withQuery(fmt.Sprintf("%s/roles/%s/token/%d", projPath(m.GetProject()), url.PathEscape(m.GetRole()), m.GetIat()), url.Values{"id": {m.GetId()}})
	return p.object(ctx, req.Header(), "DELETE", path, nil)
}

func (r repositoryRPC) Get(ctx context.Context, req *connect.Request[capstanv1.RepoQuery]) (*connect.Response[capstanv1.Object], error) {
	return r.object(ctx, req.Header(), "GET", "/api/v1/repositories/"+url.PathEscape(req.Msg.GetRepo()), nil)
}

func (r repositoryRPC) Create(ctx context.Context, req *connect.Request[capstanv1.RepoCreateRequest]) (*connect.Response[capstanv1.Object], error) {
	return r.object(ctx, req.Header(), "POST", withQuery("/api/v1/repositories", upsert(req.Msg.GetUpsert())), req.Msg.GetRepo().AsMap())
}

func (r repositoryRPC) Delete(ctx context.Context, req *connect.Request[capstanv1.RepoQuery]) (*connect.Response[capstanv1.Object], error) {
	return r.object(ctx, req.Header(), "DELETE", "/api/v1/repositories/"+url.PathEscape(req.Msg.GetRepo()), nil)
}

func upsert(on bool) url.Values {
	if on {
		return url.Values{"upsert": {"true"}}
	}
	return url.Values{}
}

type repoCredsRPC struct{ *rpcBridge }

func (r repoCredsRPC) ListRepositoryCredentials(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return r.object(ctx, req.Header(), "GET", "/api/v1/repocreds", nil)
}

func (r repoCredsRPC) CreateRepositoryCredentials(ctx context.Context, req *connect.Request[capstanv1.RepoCreateRequest]) (*connect.Response[capstanv1.Object], error) {
	return r.object(ctx, req.Header(), "POST", withQuery("/api/v1/repocreds", upsert(req.Msg.GetUpsert())), req.Msg.GetRepo().AsMap())
}

func (r repoCredsRPC) DeleteRepositoryCredentials(ctx context.Context, req *connect.Request[capstanv1.RepoQuery]) (*connect.Response[capstanv1.Object], error) {
	return r.object(ctx, req.Header(), "DELETE", "/api/v1/repocreds/"+url.PathEscape(req.Msg.GetRepo()), nil)
}

func clusterPath(server, suffix string) string {
	return "/api/v1/clusters/" + url.PathEscape(server) + suffix
}

func (c clusterRPC) Get(ctx context.Context, req *connect.Request[capstanv1.ClusterQuery]) (*connect.Response[capstanv1.Object], error) {
	return c.object(ctx, req.Header(), "GET", clusterPath(req.Msg.GetServer(), ""), nil)
}

func (c clusterRPC) Create(ctx context.Context, req *connect.Request[capstanv1.ClusterCreateRequest]) (*connect.Response[capstanv1.Object], error) {
	return c.object(ctx, req.Header(), "POST", withQuery("/api/v1/clusters", upsert(req.Msg.GetUpsert())), req.Msg.GetCluster().AsMap())
}

func (c clusterRPC) Delete(ctx context.Context, req *connect.Request[capstanv1.ClusterQuery]) (*connect.Response[capstanv1.Object], error) {
	return c.object(ctx, req.Header(), "DELETE", clusterPath(req.Msg.GetServer(), ""), nil)
}

func (c clusterRPC) RotateAuth(ctx context.Context, req *connect.Request[capstanv1.ClusterQuery]) (*connect.Response[capstanv1.Object], error) {
	return c.object(ctx, req.Header(), "POST", clusterPath(req.Msg.GetServer(), "/rotate-auth"), nil)
}

func (a accountRPC) UpdatePassword(ctx context.Context, req *connect.Request[capstanv1.UpdatePasswordRequest]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	return a.object(ctx, req.Header(), "PUT", "/api/v1/account/password",
		map[string]string{"name": m.GetName(), "currentPassword": m.GetCurrentPassword(), "newPassword": m.GetNewPassword()})
}

func (a accountRPC) CreateToken(ctx context.Context, req *connect.Request[capstanv1.AccountTokenCreateRequest]) (*connect.Response[capstanv1.TokenResponse], error) {
	m := req.Msg
	return a.token(ctx, req.Header(), "/api/v1/account/"+url.PathEscape(m.GetName())+"/token", map[string]any{"expiresIn": m.GetExpiresIn(), "id": m.GetId()})
}

func (a accountRPC) DeleteToken(ctx context.Context, req *connect.Request[capstanv1.AccountTokenDeleteRequest]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "DELETE", "/api/v1/account/"+url.PathEscape(req.Msg.GetName())+"/token/"+url.PathEscape(req.Msg.GetId()), nil)
}
