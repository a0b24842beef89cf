package commands

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/capstan-cd/capstan/internal/argoapi"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// conformanceTypes are the answers checked field by field against Argo
// CD's messages.
var conformanceTypes = map[string]bool{
	"Application": true, "ApplicationList": true, "AppProject": true, "AppProjectList": true,
	"Repository": true, "RepositoryList": true, "Cluster": true, "ClusterList": true,
	"Settings": true, "ApplicationTree": true,
}

// TestRESTConformance walks Argo CD's API description (its schema, read
// from the Argo CD module by make argocd-api) and calls every operation
// but the streams on a Capstan with one synced app: none answers 405 or a
// 404 for a path it does not know (a 404 names a missing object), and the
// Application, project, repository, cluster, settings and tree answers
// decode into Argo CD's messages with no field Argo CD does not have.
func TestRESTConformance(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, true)
	f.login()
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("one")})
	dest := kubeCluster.NewNamespace(t)
	f.expect(0, "repo", "add", remote.URL)
	f.expect(0, "app", "create", "web", "--repo", remote.URL, "--path", "app", "--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)
	f.expect(0, "app", "sync", "web", "--timeout", "60")

	schema, err := argoapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	methods, err := schema.Methods()
	if err != nil {
		t.Fatal(err)
	}
	// Real names for reads; names of nothing for writes, which must not
	// change the fixture.
	read := map[string]string{"name": "web", "applicationName": "web", "appName": "web", "repo": remote.URL, "url": remote.URL,
		"id.value": "https://kubernetes.default.svc", "server": "https://kubernetes.default.svc", "project": "default"}
	param := regexp.MustCompile(`\{([^}=]+)(=[^}]*)?\}`)
	checked := 0
	for _, md := range methods {
		b, ok := argoapi.BindingOf(md)
		if !ok || md.IsStreamingServer() {
			continue
		}
		path := param.ReplaceAllStringFunc(b.Path, func(p string) string {
			name := param.FindStringSubmatch(p)[1]
			if v, ok := read[name]; ok && b.Method == http.MethodGet {
				return url.PathEscape(v)
			}
			return "conformance-none"
		})
		if strings.HasPrefix(b.Path, "/api/v1/projects/") && b.Method == http.MethodGet {
			path = strings.Replace(path, "/projects/web", "/projects/default", 1)
		}
		status, body, err := f.call(b.Method, path, []byte("{}"))
		if err != nil {
			t.Fatalf("%s %s: %v", b.Method, path, err)
		}
		switch {
		case status == http.StatusMethodNotAllowed:
			t.Errorf("%s %s (%s): 405", b.Method, path, md.FullName())
		case status == http.StatusNotFound && !strings.Contains(string(body), `"code"`):
			t.Errorf("%s %s (%s): 404 for an unknown path: %s", b.Method, path, md.FullName(), body)
		}
		out := md.Output()
		if b.ResponseBody != "" {
			out = out.Fields().ByName(protoreflect.Name(b.ResponseBody)).Message()
		}
		if status != http.StatusOK || !conformanceTypes[string(out.Name())] {
			continue
		}
		checked++
		if err := argoapi.UnmarshalJSONStrict(body, dynamicpb.NewMessage(out)); err != nil {
			t.Errorf("%s %s: the %s answer is not Argo CD's: %v", b.Method, path, out.Name(), err)
		}
	}
	if checked < 8 {
		t.Errorf("only %d answers were checked against Argo CD's messages", checked)
	}
}

// TestRepositoryUpdate: PUT /api/v1/repositories/{url} and
// /api/v1/repocreds/{url} replace what is stored, in the same Secret, as
// Argo CD's RepositoryService.UpdateRepository and
// RepoCredsService.UpdateRepositoryCredentials do.
func TestRepositoryUpdate(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	f.login()
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("one")})
	f.expect(0, "repo", "add", remote.URL)
	path := "/api/v1/repositories/" + url.PathEscape(remote.URL)
	status, body, err := f.call(http.MethodPut, path, []byte(`{"repo":"`+remote.URL+`","name":"renamed"}`))
	if err != nil || status != http.StatusOK {
		t.Fatalf("PUT %s: %d %s %v", path, status, body, err)
	}
	var got struct{ Name string }
	if err := f.get(path, &got); err != nil || got.Name != "renamed" {
		t.Errorf("after the update: %v %+v", err, got)
	}
	if status, body, _ := f.call(http.MethodPut, "/api/v1/repositories/"+url.PathEscape("https://nowhere.example/none.git"), []byte(`{}`)); status != http.StatusNotFound {
		t.Errorf("updating a repository never added: %d %s", status, body)
	}
	creds := "/api/v1/repocreds"
	if status, body, _ := f.call(http.MethodPost, creds, []byte(`{"url":"https://git.example.com/team","username":"a","password":"b"}`)); status != http.StatusOK {
		t.Fatalf("POST %s: %d %s", creds, status, body)
	}
	item := creds + "/" + url.PathEscape("https://git.example.com/team")
	if status, body, _ := f.call(http.MethodPut, item, []byte(`{"url":"https://git.example.com/team","username":"c","password":"d"}`)); status != http.StatusOK {
		t.Fatalf("PUT %s: %d %s", item, status, body)
	}
	var list struct {
		Items []struct{ URL, Username string }
	}
	if err := f.get(creds, &list); err != nil || len(list.Items) != 1 || list.Items[0].Username != "c" {
		t.Errorf("credential templates after the update: %v %+v", err, list)
	}
}
