package script

import (
	"context"
	"testing"
)

// BenchmarkProgramRun runs a health check of the usual shape: a global
// table filled from the object's conditions.
func BenchmarkProgramRun(b *testing.B) {
	p, err := Prepare(`hs = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for i, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" and c.status == "True" then
      hs.status = "Healthy"
      hs.message = c.message
      return hs
    end
  end
end
hs.status = "Progressing"
return hs`)
	if err != nil {
		b.Fatal(err)
	}
	obj := map[string]any{"metadata": map[string]any{"name": "x", "namespace": "y", "labels": map[string]any{"a": "b"}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "message": "ok"}}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Run(context.Background(), obj, nil); err != nil {
			b.Fatal(err)
		}
	}
}
