// Package health computes the health of Kubernetes objects the way Argo CD
// does: argocd-cm's Lua checks first, then the health.lua scripts Argo CD
// ships in its module (library.go), gitops-engine's rules for the core
// kinds (rules.go), rules for common custom resources Argo CD has no script
// for (crds.go), and kstatus for everything else. An Application's health
// is the worst of its resources'.
//
//	checker, err := health.NewChecker(argocdCM.Data)
//	st, err := checker.Check(obj)            // st.Status, st.Message
//	app := health.Worst(statuses...)
package health
