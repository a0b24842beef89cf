// Argo CD Image Updater's CRD and sample objects at a pinned release, the
// reference of the tests that check Capstan's ImageUpdater CRD and handle
// Image Updater's own samples. Nothing here is built (Image Updater cannot
// be built from the module proxy alone): `make image-updater-manifests`
// downloads the module, checked against go.sum, and copies its config/crd
// and config/samples directories into bin/image-updater-manifests.
module github.com/capstan-cd/capstan/tools/image-updater-manifests

go 1.26.0

require github.com/argoproj-labs/argocd-image-updater v1.3.0
