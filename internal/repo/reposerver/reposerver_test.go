package reposerver

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// serve serves r over TLS with a certificate made for the test and
// returns a client with Argo CD's default, non-verifying TLS.
func serve(t *testing.T, r repo.Server) *Client {
	t.Helper()
	return dial(t, listen(t, r, t.TempDir()), ClientTLS{})
}

// serveLimited is serve with messages bounded to mb MiB.
func serveLimited(t *testing.T, r repo.Server, mb int) *Client {
	t.Helper()
	return dial(t, listenWith(t, r, t.TempDir(), MessageLimits(mb)...), ClientTLS{})
}

// listen serves r with the certificate in certDir (self-signed when it
// has none) and returns the address.
func listen(t *testing.T, r repo.Server, certDir string) string {
	t.Helper()
	return listenWith(t, r, certDir, MessageLimits(0)...)
}

// listenWith is listen with more server options.
func listenWith(t *testing.T, r repo.Server, certDir string, opts ...grpc.ServerOption) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cert, _, err := certs.Load(certDir, "argocd-repo-server", Hosts("argocd"))
	if err != nil {
		t.Fatal(err)
	}
	creds, err := ServerOption(cert, certs.TLSPolicy{}, "")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(append(opts, creds)...)
	Register(srv, r)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

func dial(t *testing.T, addr string, tlsOpts ClientTLS) *Client {
	t.Helper()
	c, err := Dial(addr, tlsOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestRenderOverGRPCMatchesInProcess(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	sha := remote.Commit(t, "c", map[string]string{
		"app/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers: [{name: web, image: nginx:1.27}]\n",
	})
	svc := repo.NewService(repo.Options{Root: t.TempDir()})
	client := serve(t, svc)
	req := &repo.Request{AppName: "a", Namespace: "n", Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "app"}}}

	remoteResp, err := client.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	local, err := svc.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(remoteResp, local) {
		t.Errorf("remote response differs:\n got %+v\nwant %+v", remoteResp, local)
	}
	if remoteResp.Sources[0].Revision != sha {
		t.Errorf("revision = %s, want %s", remoteResp.Sources[0].Revision, sha)
	}
	replicas, ok := remoteResp.Objects[0].Object["spec"].(map[string]any)["replicas"].(int64)
	if !ok || replicas != 2 {
		t.Errorf("replicas decoded as %T %v, want int64 2", remoteResp.Objects[0].Object["spec"].(map[string]any)["replicas"], replicas)
	}
}

func TestResolveSeesANewCommitAtOnce(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	first := remote.Commit(t, "one", map[string]string{"a.yaml": "a: 1\n"})
	svc := repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Hour})
	client := serve(t, svc)
	req := &repo.ResolveRequest{RepoURL: remote.URL, Revision: "HEAD"}
	got, err := client.Resolve(context.Background(), req)
	if err != nil || got.Revision != first {
		t.Fatalf("Resolve = %+v, %v; want %s", got, err, first)
	}
	second := remote.Commit(t, "two", map[string]string{"a.yaml": "a: 2\n"})
	// Render would reuse the ls-remote for an hour (RefsTTL); Resolve asks afresh.
	if got, err = client.Resolve(context.Background(), req); err != nil || got.Revision != second {
		t.Fatalf("after a commit, Resolve = %+v, %v; want %s", got, err, second)
	}
	if _, err := client.Resolve(context.Background(), &repo.ResolveRequest{RepoURL: remote.URL, Revision: "nope"}); !IsCode(err, "NotFound") {
		t.Errorf("unknown revision: got %v, want code NotFound", err)
	}
}

func TestErrorsKeepTheirKind(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	client := serve(t, repo.NewService(repo.Options{Root: t.TempDir()}))
	for _, tc := range []struct {
		src  v1alpha1.ApplicationSource
		code string
	}{
		{v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app", TargetRevision: "nope"}, "NotFound"},
		{v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "../x"}, "InvalidArgument"},
	} {
		_, err := client.Render(context.Background(), &repo.Request{Sources: []v1alpha1.ApplicationSource{tc.src}})
		if !IsCode(err, tc.code) {
			t.Errorf("%+v: got %v, want code %s", tc.src, err, tc.code)
		}
	}
}

// slowRenderer blocks until its context ends, to check deadlines cross the
// wire. It explores nothing.
type slowRenderer struct {
	repo.Explorer
	repo.FilesRenderer
	repo.GitLister
}

func (slowRenderer) Render(ctx context.Context, _ *repo.Request) (*repo.Response, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (slowRenderer) Resolve(ctx context.Context, _ *repo.ResolveRequest) (*repo.ResolveResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestDeadlinePropagates(t *testing.T) {
	client := serve(t, slowRenderer{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := client.Render(ctx, &repo.Request{})
	// gRPC reports the expiry as DeadlineExceeded or, when the stream is
	// reset first, as a cancellation; either way the call must fail.
	if !IsCode(err, "DeadlineExceeded") && !IsCode(err, "Canceled") {
		t.Errorf("got %v, want the call cut off by the deadline", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Error("the server did not stop at the caller's deadline")
	}
}

// TestCallTimeout: a client dialled with a call timeout (the components'
// --repo-server-timeout-seconds) gives up on a repo server that does not
// answer, though its caller set no deadline.
func TestCallTimeout(t *testing.T) {
	c, err := Dial(listen(t, slowRenderer{}, t.TempDir()), ClientTLS{}, WithCallTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Resolve(context.Background(), &repo.ResolveRequest{})
	if !IsCode(err, "DeadlineExceeded") && !IsCode(err, "Canceled") {
		t.Errorf("got %v, want the call cut off by the timeout", err)
	}
}

// TestExploreOverGRPCMatchesInProcess: the repo server's answers about a
// repository cross the wire unchanged.
func TestExploreOverGRPCMatchesInProcess(t *testing.T) {
	ctx := context.Background()
	remote := gitserver.NewLocalRepo(t)
	sha := remote.Commit(t, "add a chart", map[string]string{"web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n", "web/values.yaml": "a: {b: 1}\n"})
	remote.Tag(t, "v1")
	svc := repo.NewService(repo.Options{Root: t.TempDir()})
	client := serve(t, svc)
	for name, call := range map[string]func(repo.Server) (any, error){
		"Refs": func(s repo.Server) (any, error) { return s.Refs(ctx, &repo.RefsRequest{RepoURL: remote.URL}) },
		"Apps": func(s repo.Server) (any, error) {
			return s.Apps(ctx, &repo.AppsRequest{RepoURL: remote.URL, Revision: "v1"})
		},
		"RevisionMetadata": func(s repo.Server) (any, error) {
			return s.RevisionMetadata(ctx, &repo.RevisionMetadataRequest{RepoURL: remote.URL, Revision: sha})
		},
		"AppDetails": func(s repo.Server) (any, error) {
			return s.AppDetails(ctx, &repo.AppDetailsRequest{Source: v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "web"}})
		},
	} {
		local, err := call(svc)
		if err != nil {
			t.Fatalf("%s in-process: %v", name, err)
		}
		remote, err := call(client)
		if err != nil || !reflect.DeepEqual(local, remote) {
			t.Errorf("%s over gRPC = %+v, %v; in-process %+v", name, remote, err, local)
		}
	}
	if _, err := client.RevisionMetadata(ctx, &repo.RevisionMetadataRequest{RepoURL: remote.URL, Revision: "nope"}); !IsCode(err, "NotFound") {
		t.Errorf("metadata of an unknown revision: %v, want code NotFound", err)
	}
}

// TestRenderFilesOverGRPC renders an archive of a directory through the
// repo server: the objects come back, and a hostile archive's error keeps
// its message.
func TestRenderFilesOverGRPC(t *testing.T) {
	client := serve(t, repo.NewService(repo.Options{Root: t.TempDir()}))
	archive := func(name, typ, body string) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}
		if typ == "link" {
			h = &tar.Header{Name: name, Linkname: "/etc", Typeflag: tar.TypeSymlink}
		}
		_ = tw.WriteHeader(h)
		_, _ = tw.Write([]byte(body))
		_ = tw.Close()
		_ = zw.Close()
		return buf.Bytes()
	}
	resp, err := client.RenderFiles(context.Background(), &repo.FilesRequest{AppName: "web", Namespace: "shop",
		Archive: archive("cm.yaml", "", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n")})
	if err != nil || len(resp.Objects) != 1 || resp.Objects[0].GetName() != "settings" {
		t.Fatalf("render files: %v %+v", err, resp)
	}
	if _, err := client.RenderFiles(context.Background(), &repo.FilesRequest{AppName: "web", Archive: archive("escape", "link", "")}); err == nil ||
		!strings.Contains(err.Error(), "is a link") {
		t.Errorf("an archive with a link: %v", err)
	}
	// reposerver.streamed.manifest.max.tar.size bounds the archive.
	tiny := serve(t, repo.NewService(repo.Options{Root: t.TempDir(), FilesMaxArchiveBytes: 50}))
	if _, err := tiny.RenderFiles(context.Background(), &repo.FilesRequest{AppName: "web",
		Archive: archive("cm.yaml", "", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n")}); err == nil ||
		!strings.Contains(err.Error(), "the archive is larger than the limit of 50 bytes") {
		t.Errorf("an archive over the tar size bound: %v", err)
	}
	// reposerver.streamed.manifest.max.extracted.size bounds the files.
	small := serve(t, repo.NewService(repo.Options{Root: t.TempDir(), FilesMaxExtractedBytes: 100}))
	if _, err := small.RenderFiles(context.Background(), &repo.FilesRequest{AppName: "web",
		Archive: archive("cm.yaml", "", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: "+strings.Repeat("b", 200)+"}\n")}); err == nil ||
		!strings.Contains(err.Error(), "larger than the limit of 100 bytes") {
		t.Errorf("files over the extracted size bound: %v", err)
	}
}

// TestGitListingOverGRPC lists a revision's directories and reads its
// files through the wire, as the ApplicationSet controller's Git
// generator does, with both glob dialects.
func TestGitListingOverGRPC(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	sha := remote.Commit(t, "c", map[string]string{
		"apps/a/k.yaml":        "a: 1\n",
		"apps/b/c/k.yaml":      "b: 1\n",
		".hidden/x.yaml":       "h: 1\n",
		"config.json":          `{"top": true}`,
		"apps/b/c/config.json": `{"deep": true}`,
	})
	client := serve(t, repo.NewService(repo.Options{Root: t.TempDir()}))
	ctx := context.Background()

	dirs, err := client.GitDirectories(ctx, &repo.GitDirectoriesRequest{RepoURL: remote.URL, Revision: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"apps", "apps/a", "apps/b", "apps/b/c"}; dirs.Revision != sha || !reflect.DeepEqual(dirs.Paths, want) {
		t.Errorf("directories = %s %v, want %s %v", dirs.Revision, dirs.Paths, sha, want)
	}

	for _, tc := range []struct {
		req  repo.GitFilesRequest
		want []string
	}{
		// As in a git pathspec, "*" crosses directories.
		{repo.GitFilesRequest{Patterns: []string{"*config.json"}}, []string{"apps/b/c/config.json", "config.json"}},
		{repo.GitFilesRequest{Patterns: []string{"*config.json"}, PathAware: true}, []string{"config.json"}},
		{repo.GitFilesRequest{Patterns: []string{"**/config.json"}, PathAware: true}, []string{"apps/b/c/config.json"}},
		{repo.GitFilesRequest{Patterns: []string{"apps/**"}, Exclude: []string{"apps/b/**"}, PathAware: true}, []string{"apps/a/k.yaml"}},
	} {
		tc.req.RepoURL, tc.req.Revision = remote.URL, "main"
		files, err := client.GitFiles(ctx, &tc.req)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for name := range files.Files {
			got = append(got, name)
		}
		slices.Sort(got)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: files %v, want %v", tc.req, got, tc.want)
		}
	}
	files, _ := client.GitFiles(ctx, &repo.GitFilesRequest{RepoURL: remote.URL, Revision: "main", Patterns: []string{"config.json"}})
	if string(files.Files["config.json"]) != `{"top": true}` {
		t.Errorf("content = %q", files.Files["config.json"])
	}
	remote.Commit(t, "big", map[string]string{"big.json": strings.Repeat("x", repo.MaxGitFile+1)})
	if _, err := client.GitFiles(ctx, &repo.GitFilesRequest{RepoURL: remote.URL, Revision: "main", Patterns: []string{"big.json"}}); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("a file over the bound: %v", err)
	}
}

// TestMessageLimits: reposerver.grpc.max.size bounds what the repo server
// takes and what it answers; over it, the call fails with
// ResourceExhausted and the server stays up.
func TestMessageLimits(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	big := strings.Repeat("x", 3<<19) // 1.5 MiB
	sha := remote.Commit(t, "c", map[string]string{
		"big/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {v: " + big + "}\n",
		"small/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: small}\n",
	})
	client := serveLimited(t, repo.NewService(repo.Options{Root: t.TempDir()}), 1)
	render := func(path string) error {
		_, err := client.Render(context.Background(), &repo.Request{AppName: "a", Namespace: "n",
			Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: path, TargetRevision: sha}}})
		return err
	}
	exhausted := func(err error) bool {
		var re *RemoteError
		return errors.As(err, &re) && re.Code == codes.ResourceExhausted.String()
	}
	if err := render("big"); !exhausted(err) {
		t.Errorf("an answer over 1 MiB: %v, want ResourceExhausted", err)
	}
	if err := render("small"); err != nil {
		t.Errorf("an answer under the bound: %v", err)
	}
	if _, err := client.RenderFiles(context.Background(), &repo.FilesRequest{AppName: "a", Archive: []byte(big)}); !exhausted(err) {
		t.Errorf("a request over 1 MiB: %v, want ResourceExhausted", err)
	}
	wide := serveLimited(t, repo.NewService(repo.Options{Root: t.TempDir()}), 0)
	if _, err := wide.Render(context.Background(), &repo.Request{AppName: "a", Namespace: "n",
		Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "big", TargetRevision: sha}}}); err != nil {
		t.Errorf("the default bound (%d MiB): %v", DefaultMaxMessageMB, err)
	}
}
