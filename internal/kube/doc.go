// Package kube holds what every Capstan component needs to talk to a
// Kubernetes API server: a scheme that knows Capstan's types, a client built
// from it, and the installation of Capstan's CRDs.
package kube
