package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestResourceTreeStream follows an app's resource tree: the tree comes
// first, and again when a sync adds an object.
func TestResourceTreeStream(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := startWithController(t)
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	first := remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMap("one")})
	admin := f.adminToken()
	body := fmt.Sprintf(`{"metadata":{"name":"tree"},"spec":{"project":"default","destination":{"server":"https://kubernetes.default.svc","namespace":%q},
		"source":{"repoURL":%q,"path":"app"},"syncPolicy":{"automated":{}}}}`, dest, remote.URL)
	if code := f.call("POST", "/api/v1/applications", body, admin, nil); code != 200 {
		t.Fatalf("create: %d", code)
	}
	f.eventually("tree", "synced", syncedAt(first))
	trees := streamOf[appstate.Tree](t, f, "/api/v1/stream/applications/tree/resource-tree", admin)
	waitTree := func(want int) {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for {
			select {
			case tree := <-trees:
				if len(tree.Nodes) == want {
					return
				}
			case <-timeout:
				t.Fatalf("no tree of %d nodes streamed", want)
			}
		}
	}
	waitTree(1)
	second := remote.Commit(t, "two", map[string]string{"app/other.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n"})
	var refreshed v1alpha1.Application
	if code := f.call("GET", "/api/v1/applications/tree?refresh=normal", "", admin, &refreshed); code != 200 {
		t.Fatalf("refresh: %d", code)
	}
	// The refreshed app is answered with the comparison of the new commit.
	if refreshed.Status.Sync.Revision != second {
		t.Errorf("refreshed app compared at %s, want %s", refreshed.Status.Sync.Revision, second)
	}
	f.eventually("tree", "synced again", syncedAt(second))
	waitTree(2)
	if code := f.call("GET", "/api/v1/stream/applications/missing/resource-tree", "", admin, nil); code != 404 {
		t.Errorf("the tree stream of an app that does not exist: %d", code)
	}
}
