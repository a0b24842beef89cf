// Argo CD's install manifests and CRDs at a pinned release, for the tests
// that compare Capstan's CRDs with Argo CD's and take over an Argo CD
// install. Nothing here is built: `make argocd-manifests` downloads the
// module (checked against go.sum) and copies its manifests/ directory into
// bin/argocd-manifests. Argo CD's newest release the module proxy serves
// (it needs Go 1.27, as Capstan's go.mod does); tools/argocd pins the CLI
// separately.
module github.com/capstan-cd/capstan/tools/argocd-manifests

go 1.27.0

require github.com/argoproj/argo-cd/v3 v3.6.1
