// Package controller reconciles Applications: it renders each one's sources
// through the repo server, compares them with the destination's live state,
// reports sync status and health, and syncs on request or automatically.
//
// The pieces live in sub-packages: health (per-kind health), diff (drift by
// server-side dry run), sync (ordered apply, hooks, prune). This package is
// the loop that joins them with the live caches of internal/cluster.
package controller
