package objpath_test

import (
	"context"
	"fmt"

	"github.com/capstan-cd/capstan/internal/objpath"
)

func Example() {
	live := map[string]any{"spec": map[string]any{"replicas": int64(5)}}
	desired := map[string]any{"spec": map[string]any{"replicas": int64(2)}}

	// Keep the live replica count, as RespectIgnoreDifferences does.
	p, _ := objpath.Pointer("/spec/replicas")
	if v, ok := objpath.Get(live, p); ok {
		_ = objpath.Set(desired, p, v)
	}
	fmt.Println(desired["spec"])

	paths, _ := objpath.JQ(context.Background(), live, ".spec.replicas", 0)
	fmt.Println(paths)
	// Output:
	// map[replicas:5]
	// [[spec replicas]]
}
