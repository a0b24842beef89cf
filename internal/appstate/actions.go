package appstate

import (
	"context"
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/actions"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Actions lists the actions offered on a live object of the
// Application's tree.
func (r *Reader) Actions(ctx context.Context, app *v1alpha1.Application, ref ResourceRef) ([]actions.Action, error) {
	obj, err := r.Live(ctx, app, ref)
	if err != nil {
		return nil, err
	}
	set, err := r.ActionSet(ctx)
	if err != nil {
		return nil, err
	}
	return set.For(ctx, obj)
}

// ActionSet is the built-in actions and argocd-cm's customizations; a
// broken customization fails the actions of its kinds only.
func (r *Reader) ActionSet(ctx context.Context) (*actions.Set, error) {
	cm, err := settings.LoadArgoCD(ctx, r.Client, r.Namespace)
	if err != nil {
		return nil, err
	}
	set, _ := actions.NewSet(cm.Data)
	return set, nil
}

// RunAction runs an action on a live object of the Application's tree and
// writes its result to the cluster, acting as the app's syncs do: the
// object changed (a merge patch of what the action changed, so concurrent
// changes to other fields stay) and the objects it creates, each of which
// the project must allow as a sync would. params are the action's
// parameters (argocd-cm's Lua actions read them as actionParams).
func (r *Reader) RunAction(ctx context.Context, app *v1alpha1.Application, ref ResourceRef, name string, params map[string]string) error {
	live, d, err := r.live(ctx, app, ref)
	if err != nil {
		return err
	}
	set, err := r.ActionSet(ctx)
	if err != nil {
		return err
	}
	res, err := set.Run(ctx, live, name, params)
	if err != nil {
		return err
	}
	for _, obj := range res.Created {
		if err := r.permitCreate(ctx, app, d, live, obj); err != nil {
			return err
		}
	}
	c, err := r.acting(ctx, app, d)
	if err != nil {
		return err
	}
	if res.Modified != nil {
		if err := patchChange(ctx, d, c, live, res.Modified); err != nil {
			return err
		}
	}
	for _, obj := range res.Created {
		ri, _, err := d.ResourceWith(c, obj.GroupVersionKind(), obj.GetNamespace())
		if err != nil {
			return err
		}
		if _, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: engine.FieldManager}); err != nil {
			return fmt.Errorf("creating %s: %w", engine.KeyOf(obj).Ref(), err)
		}
	}
	return nil
}

// patchChange writes what changed between before and after as a merge
// patch, guarded by before's resourceVersion.
func patchChange(ctx context.Context, d *engine.Destination, c dynamic.Interface, before, after *unstructured.Unstructured) error {
	a, err := json.Marshal(before)
	if err != nil {
		return err
	}
	b, err := json.Marshal(after)
	if err != nil {
		return err
	}
	patch, err := jsonpatch.CreateMergePatch(a, b)
	if err != nil {
		return err
	}
	ri, _, err := d.ResourceWith(c, before.GroupVersionKind(), before.GetNamespace())
	if err != nil {
		return err
	}
	if _, err := ri.Patch(ctx, before.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: engine.FieldManager}); err != nil {
		return fmt.Errorf("patching %s: %w", engine.KeyOf(before).Ref(), err)
	}
	return nil
}
