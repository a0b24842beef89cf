package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/capstan-cd/capstan/internal/api/capstanv1"
	"github.com/capstan-cd/capstan/internal/api/capstanv1/capstanv1connect"
)

// rpcClients are the RPC API's clients, speaking gRPC-Web (--grpc-web):
// the CLI's REST calls are carried by the matching RPCs, for proxies that
// pass only gRPC-Web.
type rpcClients struct {
	version  capstanv1connect.VersionServiceClient
	session  capstanv1connect.SessionServiceClient
	settings capstanv1connect.SettingsServiceClient
	apps     capstanv1connect.ApplicationServiceClient
	projects capstanv1connect.ProjectServiceClient
	repos    capstanv1connect.RepositoryServiceClient
	creds    capstanv1connect.RepoCredsServiceClient
	clusters capstanv1connect.ClusterServiceClient
	accounts capstanv1connect.AccountServiceClient
}

func newRPCClients(hc *http.Client, base string) *rpcClients {
	o := connect.WithGRPCWeb()
	return &rpcClients{
		version: capstanv1connect.NewVersionServiceClient(hc, base, o), session: capstanv1connect.NewSessionServiceClient(hc, base, o),
		settings: capstanv1connect.NewSettingsServiceClient(hc, base, o),
		apps:     capstanv1connect.NewApplicationServiceClient(hc, base, o), projects: capstanv1connect.NewProjectServiceClient(hc, base, o),
		repos: capstanv1connect.NewRepositoryServiceClient(hc, base, o), creds: capstanv1connect.NewRepoCredsServiceClient(hc, base, o),
		clusters: capstanv1connect.NewClusterServiceClient(hc, base, o), accounts: capstanv1connect.NewAccountServiceClient(hc, base, o),
	}
}

// call is one REST call to carry: path parameters by name, the query and
// the JSON body.
type call struct {
	ctx   context.Context
	token string
	path  map[string]string
	query url.Values
	body  []byte
}

// request wraps msg with the caller's token.
func request[T any](c *call, msg *T) *connect.Request[T] {
	req := connect.NewRequest(msg)
	if c.token != "" {
		req.Header().Set("Authorization", "Bearer "+c.token)
	}
	return req
}

// object decodes the body as a JSON object.
func (c *call) object() (*structpb.Struct, error) {
	var m map[string]any
	if err := json.Unmarshal(c.body, &m); err != nil {
		return nil, err
	}
	return structpb.NewStruct(m)
}

// field decodes one field of the JSON body.
func (c *call) field(name string, v any) {
	var m map[string]json.RawMessage
	if json.Unmarshal(c.body, &m) == nil {
		_ = json.Unmarshal(m[name], v)
	}
}

func (c *call) flag(name string) bool { return c.query.Get(name) == "true" }

func (c *call) appQuery() *capstanv1.ApplicationQuery {
	return &capstanv1.ApplicationQuery{Name: c.path["name"], Projects: c.query["projects"], Selector: c.query.Get("selector"),
		AppNamespace: c.query.Get("appNamespace"), ResourceVersion: c.query.Get("resourceVersion")}
}

// answer is what an RPC returned, as the REST answer's JSON.
type answer = any

// route maps one REST path pattern to its RPC.
type route struct {
	method, pattern string
	rpc             func(r *rpcClients, c *call) (answer, error)
}

func obj(resp *connect.Response[capstanv1.Object], err error) (answer, error) {
	if err != nil {
		return nil, err
	}
	return resp.Msg.GetObject(), nil
}

func tok(resp *connect.Response[capstanv1.TokenResponse], err error) (answer, error) {
	if err != nil {
		return nil, err
	}
	return map[string]string{"token": resp.Msg.GetToken()}, nil
}

// routes are the REST calls the CLI makes, with the RPC carrying each.
var routes = []route{
	{"GET", "/api/version", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.version.Version(c.ctx, request(c, &capstanv1.VersionRequest{})))
	}},
	{"POST", "/api/v1/session", func(r *rpcClients, c *call) (answer, error) {
		var u, p string
		c.field("username", &u)
		c.field("password", &p)
		resp, err := r.session.Create(c.ctx, request(c, &capstanv1.SessionCreateRequest{Username: u, Password: p}))
		if err != nil {
			return nil, err
		}
		return map[string]string{"token": resp.Msg.GetToken()}, nil
	}},
	{"GET", "/api/v1/settings", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.settings.Get(c.ctx, request(c, &capstanv1.SettingsQuery{})))
	}},
	{"GET", "/api/v1/session/userinfo", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.session.GetUserInfo(c.ctx, request(c, &capstanv1.UserInfoRequest{})))
	}},
	{"GET", "/api/v1/applications", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.apps.List(c.ctx, request(c, c.appQuery())))
	}},
	{"POST", "/api/v1/applications", func(r *rpcClients, c *call) (answer, error) {
		o, err := c.object()
		if err != nil {
			return nil, err
		}
		if c.flag("upsert") {
			return nil, errors.New("--upsert is not carried over gRPC-Web; use it without --grpc-web")
		}
		return obj(r.apps.Create(c.ctx, request(c, &capstanv1.Object{Object: o})))
	}},
	{"GET", "/api/v1/applications/{name}", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.apps.Get(c.ctx, request(c, c.appQuery())))
	}},
	{"PATCH", "/api/v1/applications/{name}", func(r *rpcClients, c *call) (answer, error) {
		var patch, kind string
		c.field("patch", &patch)
		c.field("patchType", &kind)
		return obj(r.apps.Patch(c.ctx, request(c, &capstanv1.ApplicationPatchRequest{Name: c.path["name"], AppNamespace: c.query.Get("appNamespace"), Patch: patch, PatchType: kind})))
	}},
	{"PUT", "/api/v1/applications/{name}/spec", func(r *rpcClients, c *call) (answer, error) {
		spec, err := c.object()
		if err != nil {
			return nil, err
		}
		return obj(r.apps.UpdateSpec(c.ctx, request(c, &capstanv1.ApplicationUpdateSpecRequest{Name: c.path["name"], AppNamespace: c.query.Get("appNamespace"), Spec: spec})))
	}},
	{"DELETE", "/api/v1/applications/{name}", func(r *rpcClients, c *call) (answer, error) {
		req := &capstanv1.ApplicationDeleteRequest{Name: c.path["name"], AppNamespace: c.query.Get("appNamespace"), PropagationPolicy: c.query.Get("propagationPolicy")}
		if v := c.query.Get("cascade"); v != "" {
			b, _ := strconv.ParseBool(v)
			req.Cascade = &b
		}
		return obj(r.apps.Delete(c.ctx, request(c, req)))
	}},
	{"POST", "/api/v1/applications/{name}/sync", func(r *rpcClients, c *call) (answer, error) {
		var body struct {
			Revision string
			Prune    bool
			DryRun   bool
		}
		_ = json.Unmarshal(c.body, &body)
		return obj(r.apps.Sync(c.ctx, request(c, &capstanv1.ApplicationSyncRequest{Name: c.path["name"], AppNamespace: c.query.Get("appNamespace"),
			Revision: body.Revision, Prune: body.Prune, DryRun: body.DryRun})))
	}},
	{"POST", "/api/v1/applications/{name}/rollback", func(r *rpcClients, c *call) (answer, error) {
		var body struct {
			ID     int64
			Prune  bool
			DryRun bool
		}
		_ = json.Unmarshal(c.body, &body)
		return obj(r.apps.Rollback(c.ctx, request(c, &capstanv1.ApplicationRollbackRequest{Name: c.path["name"], AppNamespace: c.query.Get("appNamespace"),
			Id: body.ID, Prune: body.Prune, DryRun: body.DryRun})))
	}},
	{"DELETE", "/api/v1/applications/{name}/operation", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.apps.TerminateOperation(c.ctx, request(c, c.appQuery())))
	}},
	{"GET", "/api/v1/applications/{name}/managed-resources", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.apps.ManagedResources(c.ctx, request(c, c.appQuery())))
	}},
	{"GET", "/api/v1/applications/{name}/resource-tree", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.apps.ResourceTree(c.ctx, request(c, c.appQuery())))
	}},
	{"GET", "/api/v1/applications/{name}/manifests", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.apps.GetManifests(c.ctx, request(c, &capstanv1.ApplicationManifestQuery{Name: c.path["name"], AppNamespace: c.query.Get("appNamespace"), Revision: c.query.Get("revision")})))
	}},
	{"GET", "/api/v1/projects", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.projects.List(c.ctx, request(c, &capstanv1.NameQuery{})))
	}},
	{"POST", "/api/v1/projects", func(r *rpcClients, c *call) (answer, error) {
		var body struct {
			Project map[string]any
			Upsert  bool
		}
		if err := json.Unmarshal(c.body, &body); err != nil {
			return nil, err
		}
		p, err := structpb.NewStruct(body.Project)
		if err != nil {
			return nil, err
		}
		return obj(r.projects.Create(c.ctx, request(c, &capstanv1.ProjectCreateRequest{Project: p, Upsert: body.Upsert})))
	}},
	{"GET", "/api/v1/projects/{name}", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.projects.Get(c.ctx, request(c, &capstanv1.NameQuery{Name: c.path["name"]})))
	}},
	{"PUT", "/api/v1/projects/{name}", func(r *rpcClients, c *call) (answer, error) {
		var body struct{ Project map[string]any }
		if err := json.Unmarshal(c.body, &body); err != nil {
			return nil, err
		}
		p, err := structpb.NewStruct(body.Project)
		if err != nil {
			return nil, err
		}
		return obj(r.projects.Update(c.ctx, request(c, &capstanv1.Object{Object: p})))
	}},
	{"DELETE", "/api/v1/projects/{name}", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.projects.Delete(c.ctx, request(c, &capstanv1.NameQuery{Name: c.path["name"]})))
	}},
	{"POST", "/api/v1/projects/{name}/roles/{role}/token", func(r *rpcClients, c *call) (answer, error) {
		var body struct {
			ExpiresIn int64
			ID        string
		}
		_ = json.Unmarshal(c.body, &body)
		return tok(r.projects.CreateToken(c.ctx, request(c, &capstanv1.ProjectTokenCreateRequest{Project: c.path["name"], Role: c.path["role"], ExpiresIn: body.ExpiresIn, Id: body.ID})))
	}},
	{"DELETE", "/api/v1/projects/{name}/roles/{role}/token/{iat}", func(r *rpcClients, c *call) (answer, error) {
		iat, _ := strconv.ParseInt(c.path["iat"], 10, 64)
		return obj(r.projects.DeleteToken(c.ctx, request(c, &capstanv1.ProjectTokenDeleteRequest{Project: c.path["name"], Role: c.path["role"], Iat: iat, Id: c.query.Get("id")})))
	}},
	{"GET", "/api/v1/repositories", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.repos.List(c.ctx, request(c, &capstanv1.NameQuery{})))
	}},
	{"POST", "/api/v1/repositories", func(r *rpcClients, c *call) (answer, error) {
		o, err := c.object()
		if err != nil {
			return nil, err
		}
		return obj(r.repos.Create(c.ctx, request(c, &capstanv1.RepoCreateRequest{Repo: o, Upsert: c.flag("upsert")})))
	}},
	{"DELETE", "/api/v1/repositories/{url}", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.repos.Delete(c.ctx, request(c, &capstanv1.RepoQuery{Repo: c.path["url"]})))
	}},
	{"GET", "/api/v1/repocreds", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.creds.ListRepositoryCredentials(c.ctx, request(c, &capstanv1.NameQuery{})))
	}},
	{"POST", "/api/v1/repocreds", func(r *rpcClients, c *call) (answer, error) {
		o, err := c.object()
		if err != nil {
			return nil, err
		}
		return obj(r.creds.CreateRepositoryCredentials(c.ctx, request(c, &capstanv1.RepoCreateRequest{Repo: o, Upsert: c.flag("upsert")})))
	}},
	{"DELETE", "/api/v1/repocreds/{url}", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.creds.DeleteRepositoryCredentials(c.ctx, request(c, &capstanv1.RepoQuery{Repo: c.path["url"]})))
	}},
	{"GET", "/api/v1/clusters", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.clusters.List(c.ctx, request(c, &capstanv1.NameQuery{})))
	}},
	{"POST", "/api/v1/clusters", func(r *rpcClients, c *call) (answer, error) {
		o, err := c.object()
		if err != nil {
			return nil, err
		}
		return obj(r.clusters.Create(c.ctx, request(c, &capstanv1.ClusterCreateRequest{Cluster: o, Upsert: c.flag("upsert")})))
	}},
	{"GET", "/api/v1/clusters/{server}", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.clusters.Get(c.ctx, request(c, &capstanv1.ClusterQuery{Server: c.path["server"]})))
	}},
	{"DELETE", "/api/v1/clusters/{server}", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.clusters.Delete(c.ctx, request(c, &capstanv1.ClusterQuery{Server: c.path["server"]})))
	}},
	{"POST", "/api/v1/clusters/{server}/rotate-auth", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.clusters.RotateAuth(c.ctx, request(c, &capstanv1.ClusterQuery{Server: c.path["server"]})))
	}},
	{"GET", "/api/v1/account", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.accounts.ListAccounts(c.ctx, request(c, &capstanv1.NameQuery{})))
	}},
	{"PUT", "/api/v1/account/password", func(r *rpcClients, c *call) (answer, error) {
		var body struct{ Name, CurrentPassword, NewPassword string }
		_ = json.Unmarshal(c.body, &body)
		return obj(r.accounts.UpdatePassword(c.ctx, request(c, &capstanv1.UpdatePasswordRequest{Name: body.Name, CurrentPassword: body.CurrentPassword, NewPassword: body.NewPassword})))
	}},
	{"GET", "/api/v1/account/can-i/{resource}/{action}/{object...}", func(r *rpcClients, c *call) (answer, error) {
		resp, err := r.accounts.CanI(c.ctx, request(c, &capstanv1.CanIRequest{Resource: c.path["resource"], Action: c.path["action"], Subresource: c.path["object"]}))
		if err != nil {
			return nil, err
		}
		return map[string]string{"value": resp.Msg.GetValue()}, nil
	}},
	{"POST", "/api/v1/account/{name}/token", func(r *rpcClients, c *call) (answer, error) {
		var body struct {
			ExpiresIn int64
			ID        string
		}
		_ = json.Unmarshal(c.body, &body)
		return tok(r.accounts.CreateToken(c.ctx, request(c, &capstanv1.AccountTokenCreateRequest{Name: c.path["name"], ExpiresIn: body.ExpiresIn, Id: body.ID})))
	}},
	{"DELETE", "/api/v1/account/{name}/token/{id}", func(r *rpcClients, c *call) (answer, error) {
		return obj(r.accounts.DeleteToken(c.ctx, request(c, &capstanv1.AccountTokenDeleteRequest{Name: c.path["name"], Id: c.path["id"]})))
	}},
}

// match finds the route of a REST call and its path parameters.
func match(method, rawPath string) (*route, map[string]string) {
	segs := strings.Split(strings.Trim(rawPath, "/"), "/")
	for i := range routes {
		if routes[i].method != method {
			continue
		}
		if params, ok := matchPattern(routes[i].pattern, segs); ok {
			return &routes[i], params
		}
	}
	return nil, nil
}

// matchPattern matches escaped path segments against a pattern with
// {name} segments and a final {name...} taking the rest.
func matchPattern(pattern string, segs []string) (map[string]string, bool) {
	pat := strings.Split(strings.Trim(pattern, "/"), "/")
	params := map[string]string{}
	for j, p := range pat {
		if j >= len(segs) {
			return nil, false
		}
		name, isParam := strings.CutPrefix(p, "{")
		if !isParam {
			if segs[j] != p {
				return nil, false
			}
			continue
		}
		name = strings.TrimSuffix(name, "}")
		rest, many := strings.CutSuffix(name, "...")
		last := j + 1
		if many {
			last = len(segs)
		}
		var vals []string
		for _, seg := range segs[j:last] {
			v, err := url.PathUnescape(seg)
			if err != nil {
				return nil, false
			}
			vals = append(vals, v)
		}
		if many {
			params[rest] = strings.Join(vals, "/")
			return params, true
		}
		params[name] = vals[0]
	}
	return params, len(segs) == len(pat)
}

// httpStatus is the REST status of an RPC error code.
var httpStatus = map[connect.Code]int{
	connect.CodeInvalidArgument: http.StatusBadRequest, connect.CodeUnauthenticated: http.StatusUnauthorized,
	connect.CodePermissionDenied: http.StatusForbidden, connect.CodeNotFound: http.StatusNotFound,
	connect.CodeAlreadyExists: http.StatusConflict,
}

// doRPC carries one REST call over its RPC and decodes the answer into out.
func (c *Client) doRPC(ctx context.Context, method, path string, body []byte, out any) error {
	u, err := url.Parse(path)
	if err != nil {
		return err
	}
	r, params := match(method, u.EscapedPath())
	if r == nil {
		return fmt.Errorf("%s %s has no RPC to carry it over gRPC-Web", method, u.Path)
	}
	ans, err := r.rpc(c.rpc, &call{ctx: ctx, token: c.token, path: params, query: u.Query(), body: body})
	if err != nil {
		var ce *connect.Error
		if errors.As(err, &ce) {
			status, ok := httpStatus[ce.Code()]
			if !ok {
				status = http.StatusInternalServerError
			}
			return &Error{Status: status, Message: ce.Message()}
		}
		return err
	}
	if out == nil {
		return nil
	}
	var data []byte
	if s, ok := ans.(*structpb.Struct); ok {
		data, err = s.MarshalJSON()
	} else {
		data, err = json.Marshal(ans)
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// streamRPC carries the application event stream over the Watch RPC,
// handing each event to each as the SSE stream's data.
func (c *Client) streamRPC(ctx context.Context, path string, each func([]byte) bool) error {
	u, err := url.Parse(path)
	if err != nil {
		return err
	}
	cl := &call{ctx: ctx, token: c.token, query: u.Query(), path: map[string]string{}}
	q := cl.appQuery()
	q.Name = u.Query().Get("name")
	stream, err := c.rpc.apps.Watch(ctx, request(cl, q))
	if err != nil {
		return err
	}
	defer stream.Close()
	for stream.Receive() {
		app, err := stream.Msg().GetApplication().MarshalJSON()
		if err != nil {
			return err
		}
		data, err := json.Marshal(map[string]any{"result": map[string]any{"type": stream.Msg().GetType(), "application": json.RawMessage(app)}})
		if err != nil {
			return err
		}
		if !each(data) {
			return nil
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return stream.Err()
}
