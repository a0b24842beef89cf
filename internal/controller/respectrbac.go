package controller

import (
	"sync/atomic"

	"github.com/capstan-cd/capstan/internal/engine/live"
)

// rbacMode is argocd-cm's resource.respectRBAC as the last read of
// argocd-cm set it, which the live caches consult at each watch.
type rbacMode struct{ v atomic.Int32 }

func (m *rbacMode) set(v live.RBACMode) { m.v.Store(int32(v)) }

func (m *rbacMode) get() live.RBACMode { return live.RBACMode(m.v.Load()) }
