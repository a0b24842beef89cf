package appstate

import (
	"cmp"
	"context"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/settings"
)

// orphanedNodes are the orphaned resources (project.IsOrphan) of the
// Application's destination namespace, when its project monitors them:
// each kind that can be one is listed there.
func (r *Reader) orphanedNodes(ctx context.Context, app *v1alpha1.Application, d *engine.Destination, cm *settings.ArgoCD, describe describer) ([]ResourceNode, error) {
	ns := app.Spec.Destination.Namespace
	proj, err := project.Load(ctx, r.Client, r.Namespace, cmp.Or(app.Spec.Project, v1alpha1.DefaultAppProjectName))
	if err != nil || !project.MonitorsOrphans(proj) || ns == "" {
		return nil, nil // an unreadable project is the controller's to report
	}
	method, err := tracking.FromSettings(cm.TrackingMethod(), cm.InstanceLabelKey(), cm.InstallationID())
	if err != nil {
		return nil, err
	}
	cache, err := d.Live()
	if err != nil {
		return nil, err
	}
	kinds, err := cache.NamespacedKinds()
	if err != nil {
		return nil, err
	}
	var nodes []ResourceNode
	for _, gvk := range kinds {
		if !project.OrphanKind(gvk.GroupKind()) {
			continue
		}
		ri, _, err := d.Resource(gvk, ns)
		if err != nil {
			continue // no longer served
		}
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s in %s for orphaned resources: %w", gvk.Kind, ns, err)
		}
		for i := range list.Items {
			if obj := &list.Items[i]; project.IsOrphan(proj, obj, tracking.App(method, obj)) {
				nodes = append(nodes, describe.node(obj))
			}
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].key().Less(nodes[j].key()) })
	return nodes, nil
}
