package argoapi_test

import (
	"fmt"

	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/capstan-cd/capstan/internal/argoapi"
)

func ExampleBindingOf() {
	schema, err := argoapi.Load()
	if err != nil {
		panic(err)
	}
	sd, _ := schema.Service("application.ApplicationService")
	b, _ := argoapi.BindingOf(sd.Methods().ByName("Get"))
	fmt.Println(b.Method, b.Path)
	// Output: GET /api/v1/applications/{name}
}

func ExampleUnmarshalJSON() {
	schema, _ := argoapi.Load()
	sd, _ := schema.Service("application.ApplicationService")
	// An Application as the REST API writes it becomes Argo CD's message,
	// and back.
	app := dynamicpb.NewMessage(sd.Methods().ByName("Get").Output())
	err := argoapi.UnmarshalJSON([]byte(`{"metadata":{"name":"guestbook","creationTimestamp":"2026-11-01T10:00:00Z"}}`), app)
	if err != nil {
		panic(err)
	}
	out, _ := argoapi.MarshalJSON(app)
	fmt.Println(string(out))
	// Output: {"metadata":{"creationTimestamp":"2026-11-01T10:00:00Z","name":"guestbook"}}
}
