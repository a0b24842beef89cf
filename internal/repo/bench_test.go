package repo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/render/directory"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// BenchmarkRenderCacheHit is a render of an unchanged commit: refs from the
// shared ls-remote, objects from the cache.
func BenchmarkRenderCacheHit(b *testing.B) {
	remote := gitserver.NewLocalRepo(b)
	remote.Commit(b, "c", map[string]string{"app/deploy.yaml": deployment, "app/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n"})
	svc := NewService(Options{Root: b.TempDir()})
	req := &Request{AppName: "a", Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "app"}}}
	if _, err := svc.Render(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := svc.Render(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDirectory100Files renders a directory of 100 manifest files.
func BenchmarkDirectory100Files(b *testing.B) {
	dir := b.TempDir()
	for i := range 100 {
		content := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  key: value-%d\n---\n%s", i, i, deployment)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%03d.yaml", i)), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		objs, err := directory.Render(context.Background(), dir, ".", nil, nil, directory.Walk{})
		if err != nil || len(objs) != 200 {
			b.Fatalf("%d objects, %v", len(objs), err)
		}
	}
}

// Benchmark1000AppsOneCommit renders 1,000 Applications, each its own
// directory of one monorepo commit, as a controller's first pass would: one
// fetch, then every render from the shared checkout.
func Benchmark1000AppsOneCommit(b *testing.B) {
	srv := gitserver.New(b)
	remote := srv.NewRepo(b, "monorepo")
	files := map[string]string{}
	for i := range 1000 {
		files[fmt.Sprintf("apps/app-%04d/deploy.yaml", i)] = deployment
		files[fmt.Sprintf("apps/app-%04d/svc.yaml", i)] = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n"
	}
	remote.Commit(b, "monorepo", files)
	creds := staticCreds{Username: srv.Username, Password: srv.Password}

	for b.Loop() {
		svc := NewService(Options{Root: b.TempDir(), Credentials: creds})
		work := make(chan int)
		var wg sync.WaitGroup
		var failed error
		var mu sync.Mutex
		for range runtime.GOMAXPROCS(0) * 4 {
			wg.Go(func() {
				for i := range work {
					_, err := svc.Render(context.Background(), &Request{
						AppName:   fmt.Sprintf("app-%04d", i),
						Namespace: "default",
						Sources:   []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: fmt.Sprintf("apps/app-%04d", i), TargetRevision: "main"}},
					})
					if err != nil {
						mu.Lock()
						failed = err
						mu.Unlock()
					}
				}
			})
		}
		for i := range 1000 {
			work <- i
		}
		close(work)
		wg.Wait()
		if failed != nil {
			b.Fatal(failed)
		}
		st := svc.GitStore().Repo(remote.URL, git.Creds(creds)).Stats()
		b.ReportMetric(float64(st.Fetches), "fetches/op")
		b.ReportMetric(float64(st.LsRemotes), "ls-remotes/op")
	}
}
