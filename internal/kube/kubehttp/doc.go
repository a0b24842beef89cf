// Package kubehttp tunes the HTTP transport of Kubernetes clients as Argo
// CD's ARGOCD_K8S_* settings do: connect and TLS handshake timeouts, TCP
// keep-alive, idle connections, and retries of failed requests. Options
// are applied to a rest.Config through its transport wrappers, so the
// config keeps its TLS settings (exec, logs and port-forward still work)
// and clients built from it share one tuned connection pool.
package kubehttp
