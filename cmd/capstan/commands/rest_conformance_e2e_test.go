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
