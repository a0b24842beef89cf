// Package engine compares and applies an Application's objects against one
// destination cluster. It knows no reconcile loop and no HTTP: the
// controller and the API server both call it, so what a user is shown and
// what the controller records come from the same routine.
//
//	dests := engine.NewDestinations(engine.DestinationOptions{})
//	dest, err := dests.Get(cluster)                 // clients, rebuilt when credentials change
//	cmp, err := dest.Compare(ctx, engine.CompareRequest{
//		App: key, Desired: rendered, Live: dest.Direct(tracking.Annotation), Health: checker,
//	})
//	cmp.Sync, cmp.Health, cmp.Resources, cmp.Prune
//
// Its subpackages are the parts: diff (server-side dry-run comparison),
// health (Argo CD's health rules and Lua), apply (sync plans: waves, hooks,
// prune), live (a watch cache per cluster) and tracking (which objects
// belong to which Application).
package engine
