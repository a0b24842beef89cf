package directory_test

import (
	"context"
	"fmt"
	"strings"
	"testing/fstest"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/render/directory"
)

// A source directory given as a file system (a commit's tree, say) renders
// as its checkout would: manifest files in lexical order, subdirectories
// only with recurse, values files that hold no objects skipped.
func ExampleRenderFS() {
	web := fstest.MapFS{ // the source directory "web"
		"service.yaml":  {Data: []byte("apiVersion: v1\nkind: Service\nmetadata: {name: web}\n")},
		"config.json":   {Data: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web"}}`)},
		"values.yaml":   {Data: []byte("replicas: 2\n")},
		"extra/ns.yaml": {Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n")},
	}
	for _, recurse := range []bool{false, true} {
		objs, err := directory.RenderFS(context.Background(), web, "web", &v1alpha1.ApplicationSourceDirectory{Recurse: recurse}, directory.Walk{})
		if err != nil {
			fmt.Println(err)
			return
		}
		var names []string
		for _, o := range objs {
			names = append(names, o.GetKind()+"/"+o.GetName())
		}
		fmt.Println(strings.Join(names, " "))
	}
	// Output:
	// ConfigMap/web Service/web
	// ConfigMap/web Namespace/web Service/web
}
