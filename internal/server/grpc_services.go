package server

import (
	"context"

	"connectrpc.com/connect"

	"github.com/capstan-cd/capstan/internal/api/capstanv1"
)

// The RPC services: one type per service (several have a List of the
// same signature), each method the REST call its http option names.

type versionRPC struct{ *rpcBridge }

func (x versionRPC) Version(ctx context.Context, req *connect.Request[capstanv1.VersionRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.VersionRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

type settingsRPC struct{ *rpcBridge }

func (x settingsRPC) Get(ctx context.Context, req *connect.Request[capstanv1.SettingsQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.SettingsQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

type sessionRPC struct{ *rpcBridge }

func (x sessionRPC) Create(ctx context.Context, req *connect.Request[capstanv1.SessionCreateRequest]) (*connect.Response[capstanv1.SessionResponse], error) {
	return unary[capstanv1.SessionCreateRequest, capstanv1.SessionResponse](ctx, x.rpcBridge, req)
}

func (x sessionRPC) Delete(ctx context.Context, req *connect.Request[capstanv1.SessionDeleteRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.SessionDeleteRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x sessionRPC) GetUserInfo(ctx context.Context, req *connect.Request[capstanv1.UserInfoRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.UserInfoRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

type applicationRPC struct{ *rpcBridge }

func (x applicationRPC) List(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) Get(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) Create(ctx context.Context, req *connect.Request[capstanv1.ApplicationCreateRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationCreateRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) Update(ctx context.Context, req *connect.Request[capstanv1.ApplicationUpdateRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationUpdateRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) UpdateSpec(ctx context.Context, req *connect.Request[capstanv1.ApplicationUpdateSpecRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationUpdateSpecRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) Patch(ctx context.Context, req *connect.Request[capstanv1.ApplicationPatchRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationPatchRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) Sync(ctx context.Context, req *connect.Request[capstanv1.ApplicationSyncRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationSyncRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) Rollback(ctx context.Context, req *connect.Request[capstanv1.ApplicationRollbackRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationRollbackRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) TerminateOperation(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) Delete(ctx context.Context, req *connect.Request[capstanv1.ApplicationDeleteRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationDeleteRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) ManagedResources(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) ResourceTree(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) GetManifests(ctx context.Context, req *connect.Request[capstanv1.ApplicationManifestQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationManifestQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) GetResource(ctx context.Context, req *connect.Request[capstanv1.ApplicationResourceRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationResourceRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) ListResourceEvents(ctx context.Context, req *connect.Request[capstanv1.ApplicationResourceEventsQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ApplicationResourceEventsQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x applicationRPC) Watch(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery], stream *connect.ServerStream[capstanv1.ApplicationWatchEvent]) error {
	return x.watch(ctx, req, stream)
}

type projectRPC struct{ *rpcBridge }

func (x projectRPC) List(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.NameQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x projectRPC) Get(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.NameQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x projectRPC) Create(ctx context.Context, req *connect.Request[capstanv1.ProjectCreateRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ProjectCreateRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x projectRPC) Update(ctx context.Context, req *connect.Request[capstanv1.ProjectUpdateRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ProjectUpdateRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x projectRPC) Delete(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.NameQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x projectRPC) CreateToken(ctx context.Context, req *connect.Request[capstanv1.ProjectTokenCreateRequest]) (*connect.Response[capstanv1.TokenResponse], error) {
	return unary[capstanv1.ProjectTokenCreateRequest, capstanv1.TokenResponse](ctx, x.rpcBridge, req)
}

func (x projectRPC) DeleteToken(ctx context.Context, req *connect.Request[capstanv1.ProjectTokenDeleteRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ProjectTokenDeleteRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

type repositoryRPC struct{ *rpcBridge }

func (x repositoryRPC) List(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.NameQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x repositoryRPC) Get(ctx context.Context, req *connect.Request[capstanv1.RepoQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.RepoQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x repositoryRPC) Create(ctx context.Context, req *connect.Request[capstanv1.RepoCreateRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.RepoCreateRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x repositoryRPC) Delete(ctx context.Context, req *connect.Request[capstanv1.RepoQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.RepoQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

type repoCredsRPC struct{ *rpcBridge }

func (x repoCredsRPC) ListRepositoryCredentials(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.NameQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x repoCredsRPC) CreateRepositoryCredentials(ctx context.Context, req *connect.Request[capstanv1.RepoCreateRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.RepoCreateRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x repoCredsRPC) DeleteRepositoryCredentials(ctx context.Context, req *connect.Request[capstanv1.RepoQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.RepoQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

type clusterRPC struct{ *rpcBridge }

func (x clusterRPC) List(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.NameQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x clusterRPC) Get(ctx context.Context, req *connect.Request[capstanv1.ClusterQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ClusterQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x clusterRPC) Create(ctx context.Context, req *connect.Request[capstanv1.ClusterCreateRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ClusterCreateRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x clusterRPC) Delete(ctx context.Context, req *connect.Request[capstanv1.ClusterQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ClusterQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x clusterRPC) RotateAuth(ctx context.Context, req *connect.Request[capstanv1.ClusterQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.ClusterQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

type accountRPC struct{ *rpcBridge }

func (x accountRPC) CanI(ctx context.Context, req *connect.Request[capstanv1.CanIRequest]) (*connect.Response[capstanv1.CanIResponse], error) {
	return unary[capstanv1.CanIRequest, capstanv1.CanIResponse](ctx, x.rpcBridge, req)
}

func (x accountRPC) ListAccounts(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.NameQuery, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x accountRPC) UpdatePassword(ctx context.Context, req *connect.Request[capstanv1.UpdatePasswordRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.UpdatePasswordRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}

func (x accountRPC) CreateToken(ctx context.Context, req *connect.Request[capstanv1.AccountTokenCreateRequest]) (*connect.Response[capstanv1.TokenResponse], error) {
	return unary[capstanv1.AccountTokenCreateRequest, capstanv1.TokenResponse](ctx, x.rpcBridge, req)
}

func (x accountRPC) DeleteToken(ctx context.Context, req *connect.Request[capstanv1.AccountTokenDeleteRequest]) (*connect.Response[capstanv1.Object], error) {
	return unary[capstanv1.AccountTokenDeleteRequest, capstanv1.Object](ctx, x.rpcBridge, req)
}
