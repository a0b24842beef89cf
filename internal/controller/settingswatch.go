package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/capstan-cd/capstan/internal/settings"
)

// followSettings reads argocd-cm again as soon as it changes, rather than
// at the next reconcile: what is derived from it also acts between
// reconciles (which live updates refresh an Application, how kinds the
// controller may not list are watched).
func (r *reconciler) followSettings(ctx context.Context, c ctrlcache.Cache) error {
	informer, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		return fmt.Errorf("watching %s: %w", settings.CMName, err)
	}
	reread := func(obj any) {
		if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Name == settings.CMName && cm.Namespace == r.opts.Namespace {
			if _, err := r.settings(ctx); err != nil {
				r.opts.Log.Warn("reading argocd-cm after it changed", "error", err)
			}
		}
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    reread,
		UpdateFunc: func(_, obj any) { reread(obj) },
	})
	return err
}
