// Package settings reads Argo CD's configuration objects (the argocd-*
// ConfigMaps and Secrets, and the Secrets labelled
// argocd.argoproj.io/secret-type) into typed values.
package settings
