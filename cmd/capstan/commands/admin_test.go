package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAdminHealthWithCustomLua(t *testing.T) {
	dir := t.TempDir()
	objects := filepath.Join(dir, "objects.yaml")
	cm := filepath.Join(dir, "argocd-cm.yaml")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(objects, []byte(`apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: web-tls, namespace: prod}
status:
  conditions: [{type: Ready, status: "False", message: "Issuer not ready"}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
spec: {paused: true}
`), 0o644))
	must(os.WriteFile(cm, []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  resource.customizations.health.cert-manager.io_Certificate: |
    hs = {status = "Progressing", message = "waiting"}
    for _, c in ipairs(obj.status.conditions or {}) do
      if c.type == "Ready" and c.status == "False" then
        hs = {status = "Degraded", message = c.message}
      end
    end
    return hs
`), 0o644))
	out, errOut, code := runCLI(t, "admin", "health", "-f", objects, "--argocd-cm", cm)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Certificate  prod/web-tls  Degraded   Issuer not ready", "Deployment   prod/web      Suspended  Deployment is paused"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, errOut, code = runCLI(t, "admin", "health", "-f", filepath.Join(dir, "missing.yaml"))
	if code != 1 || !strings.Contains(errOut, "missing.yaml") {
		t.Errorf("missing file: exit %d, %q", code, errOut)
	}
}
