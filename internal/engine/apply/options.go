package apply

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Options are sync options, from the Application's syncPolicy.syncOptions,
// the operation, or an object's argocd.argoproj.io/sync-options. Each is
// acted on where its comment says.
type Options struct {
	// CreateNamespace creates the destination namespace first (Applier).
	CreateNamespace bool
	// Prune, on an object, false keeps it when pruned (Applier); nil: as
	// the sync says.
	Prune *bool
	// PruneLast prunes only once every other wave is healthy (Applier).
	PruneLast bool
	// Replace replaces objects instead of applying them (Applier).
	Replace bool
	// Force deletes and recreates an object the apply cannot change (an
	// immutable field, a conflict); with Replace, every time (Applier).
	Force bool
	// ApplyOutOfSyncOnly applies only the objects that differ (controller).
	ApplyOutOfSyncOnly bool
	// Validate false skips schema validation (Applier); nil: validate.
	Validate *bool
	// Delete, on an object, false keeps it when pruned (Applier) or when
	// its Application is deleted (the controller's finalizer); nil: delete.
	Delete *bool
	// PruneConfirm and DeleteConfirm (Prune=confirm, Delete=confirm) make
	// the object's pruning (Applier), and for Delete its deletion with its
	// Application (the controller), wait for the user's approval.
	PruneConfirm, DeleteConfirm bool
	// FailOnSharedResource refuses a sync touching an object another
	// Application tracks (controller).
	FailOnSharedResource bool
	// RespectIgnoreDiff applies ignored fields with their live values, so
	// a sync leaves ignored differences alone (controller).
	RespectIgnoreDiff bool
	// ClientSideApplyMigration false keeps fields a client-side apply
	// (kubectl apply) set owned by it; nil or true hands them to Capstan's
	// field manager, so fields removed from Git go (Applier).
	ClientSideApplyMigration *bool
	// SkipDryRunOnMissingResource, on a custom resource whose kind the
	// cluster does not serve yet, waits for its definition (installed by
	// someone else) instead of failing at once (Applier); a kind whose CRD
	// the same sync applies is waited for without it.
	SkipDryRunOnMissingResource bool
	// ServerSideApply false applies as kubectl apply does, a three-way
	// merge recorded in the last-applied annotation (Applier); nil or true:
	// server-side apply.
	ServerSideApply *bool
	// PrunePropagation is how pruned objects' dependents are deleted:
	// foreground (the default), background or orphan (Applier).
	PrunePropagation string
}

// optionSetters are the known options, by key; each takes the value after "=".
var optionSetters = map[string]func(o *Options, v bool){
	"CreateNamespace":             func(o *Options, v bool) { o.CreateNamespace = v },
	"Prune":                       func(o *Options, v bool) { o.Prune = &v },
	"PruneLast":                   func(o *Options, v bool) { o.PruneLast = v },
	"Replace":                     func(o *Options, v bool) { o.Replace = v },
	"Force":                       func(o *Options, v bool) { o.Force = v },
	"ServerSideApply":             func(o *Options, v bool) { o.ServerSideApply = &v },
	"ApplyOutOfSyncOnly":          func(o *Options, v bool) { o.ApplyOutOfSyncOnly = v },
	"Validate":                    func(o *Options, v bool) { o.Validate = &v },
	"Delete":                      func(o *Options, v bool) { o.Delete = &v },
	"FailOnSharedResource":        func(o *Options, v bool) { o.FailOnSharedResource = v },
	"RespectIgnoreDifferences":    func(o *Options, v bool) { o.RespectIgnoreDiff = v },
	"SkipDryRunOnMissingResource": func(o *Options, v bool) { o.SkipDryRunOnMissingResource = v },
	"ClientSideApplyMigration":    func(o *Options, v bool) { o.ClientSideApplyMigration = &v },
}

// confirmSetters are the options that also take "confirm".
var confirmSetters = map[string]func(o *Options){
	"Prune":  func(o *Options) { o.PruneConfirm = true },
	"Delete": func(o *Options) { o.DeleteConfirm = true },
}

// AppliedClientSide reports whether a sync applies obj with kubectl's
// client-side apply: ServerSideApply=false in its sync-options annotation
// or, when that sets none, in app (the Application's options).
func AppliedClientSide(app Options, obj *unstructured.Unstructured) bool {
	own, _ := ParseOptions(obj.GetAnnotations()[v1alpha1.AnnotationSyncOptions])
	v := firstSet(own.ServerSideApply, app.ServerSideApply)
	return v != nil && !*v
}

// ParseOptions reads a comma-separated options annotation.
func ParseOptions(s string) (Options, error) {
	var items []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return ParseOptionList(items)
}

// ParseOptionList reads options such as "CreateNamespace=true". Unknown
// keys are an error; Delete and Prune also take "confirm".
func ParseOptionList(items []string) (Options, error) {
	var o Options
	for _, item := range items {
		key, value, ok := strings.Cut(item, "=")
		if !ok {
			return o, fmt.Errorf("sync option %q: want Key=value", item)
		}
		if key == "PrunePropagationPolicy" {
			switch value {
			case "foreground", "background", "orphan":
				o.PrunePropagation = value
				continue
			}
			return o, fmt.Errorf("sync option %q: want foreground, background or orphan", item)
		}
		set, known := optionSetters[key]
		if !known {
			return o, fmt.Errorf("unknown sync option %q", key)
		}
		switch value {
		case "confirm":
			confirm, ok := confirmSetters[key]
			if !ok {
				return o, fmt.Errorf("sync option %q: want true or false", item)
			}
			set(&o, true)
			confirm(&o)
		case "true":
			set(&o, true)
		case "false":
			set(&o, false)
		default:
			return o, fmt.Errorf("sync option %q: want true or false", item)
		}
	}
	return o, nil
}
