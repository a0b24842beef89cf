// Package actions offers and runs resource actions as Argo CD does: the
// built-in ones are the Lua actions Argo CD's Go module ships
// (<group>/<Kind>/actions/discovery.lua and actions/<name>/action.lua:
// restart a Deployment, suspend a CronJob, reconcile a Flux source, …),
// and argocd-cm's resource.customizations.actions.<group_kind> add to
// them or replace them. An action computes the change from the live
// object; applying it is the caller's.
//
//	set, err := actions.NewSet(cm.Data)
//	list, err := set.For(ctx, obj)                                  // each a.Name, a.Disabled, a.Params
//	res, err := set.Run(ctx, obj, "scale", map[string]string{"replicas": "3"})  // res.Modified, res.Created
package actions

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Action is an action offered on an object, as Argo CD's API lists it.
type Action struct {
	Name     string `json:"name"`
	Disabled bool   `json:"disabled"`
	// Params are the parameters the action asks for (scale's replicas).
	Params []Param `json:"params,omitempty"`
	// IconClass is the web UI's icon (Font Awesome classes, as Argo CD's).
	IconClass   string `json:"iconClass,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
}

// Param is a parameter an action asks for, as Argo CD's API lists it:
// by name (its value is given when the action runs).
type Param struct {
	Name string `json:"name"`
}

// Result is what running an action changes.
type Result struct {
	// Modified is the object changed, to be written back; nil when the
	// action only creates objects.
	Modified *unstructured.Unstructured
	// Created are new objects to create (create-job's Job).
	Created []*unstructured.Unstructured
}

// ErrUnknown is an action a kind does not have.
type ErrUnknown struct {
	Action string
	Kind   string
}

func (e ErrUnknown) Error() string {
	return fmt.Sprintf("action %s is not available for %s", e.Action, e.Kind)
}
