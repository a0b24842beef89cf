package manifest

import "testing"

// FuzzParse reads manifest files as a repository holds them.
func FuzzParse(f *testing.F) {
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Service, metadata: {name: b}}]\n")
	f.Add(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c"}}`)
	f.Add("a: &a [*a, *a]\n")
	f.Add("kind: [\n")
	f.Add("---\n---\n# only comments\n")
	f.Fuzz(func(t *testing.T, data string) {
		objs, err := Parse("f.yaml", []byte(data))
		if err != nil {
			_ = err.Error()
			return
		}
		for _, o := range objs {
			if o.GetAPIVersion() == "" || o.GetKind() == "" {
				t.Fatalf("an object without apiVersion or kind: %v", o.Object)
			}
		}
		_ = Images(objs)
		_ = LooksLikeManifest([]byte(data))
	})
}
