// Package health computes the health of Kubernetes objects the way Argo CD
// does: built-in rules for common kinds, custom Lua checks from argocd-cm,
// and kstatus for everything else. An Application's health is the worst of
// its resources'.
//
//	checker, err := health.NewChecker(argocdCM.Data)
//	st, err := checker.Check(obj)            // st.Status, st.Message
//	app := health.Worst(statuses...)
package health
