package updater

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iuv1 "github.com/capstan-cd/capstan/api/imageupdater/v1alpha1"
	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/imageupdater/writeback"
)

// owner is an ImageUpdater the updater handles, with what a cycle found
// and did for it, written to its status when the cycle ends.
type owner struct {
	obj *iuv1.ImageUpdater
	// invalid makes the whole object select nothing (config.Validate).
	invalid error

	mu      sync.Mutex
	apps    int
	images  int
	errors  int
	first   error // the first error, shown in the Error condition
	written []writeback.Change
}

func (o *owner) record(errs []error, written []writeback.Change) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.first == nil && len(errs) > 0 {
		o.first = errs[0]
	}
	o.errors += len(errs)
	o.written = append(o.written, written...)
}

// imageUpdaters lists the ImageUpdaters of the watched namespaces (none
// when the cluster does not serve the kind).
func (u *Updater) imageUpdaters(ctx context.Context) ([]*owner, error) {
	namespaces := u.opts.WatchNamespaces
	if len(namespaces) == 0 {
		namespaces = []string{u.opts.Namespace}
	}
	if slices.Contains(namespaces, "*") {
		namespaces = []string{""} // every namespace
	}
	var out []*owner
	for _, ns := range namespaces {
		var list iuv1.ImageUpdaterList
		err := u.opts.Client.List(ctx, &list, client.InNamespace(ns))
		if apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil // the CRD is not installed: annotations only
		}
		if err != nil {
			return nil, fmt.Errorf("listing ImageUpdaters in %s: %w", nsName(ns), err)
		}
		for i := range list.Items {
			o := &owner{obj: &list.Items[i]}
			o.invalid = config.Validate(o.obj)
			out = append(out, o)
		}
	}
	return out, nil
}

// annotationMode reports whether Applications are read by their
// annotations alone: when no ImageUpdater exists in the watched
// namespaces, nor in the updater's own one. An ImageUpdater there that
// another updater watches (Argo CD Image Updater beside this one) turns
// it off too, so the two never update the same Applications.
func (u *Updater) annotationMode(ctx context.Context, owners []*owner) (bool, error) {
	if len(owners) > 0 {
		return false, nil
	}
	var list iuv1.ImageUpdaterList
	err := u.opts.Client.List(ctx, &list, client.InNamespace(u.opts.Namespace), client.Limit(1))
	if apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("listing ImageUpdaters in %s: %w", u.opts.Namespace, err)
	}
	if len(list.Items) > 0 {
		u.opts.Log.Debug("Annotations are not read: an ImageUpdater another updater watches is in this namespace", "namespace", u.opts.Namespace)
	}
	return len(list.Items) == 0, nil
}

func nsName(ns string) string {
	if ns == "" {
		return "all namespaces"
	}
	return ns
}

// selected lists the Applications the ImageUpdaters select, each with the
// settings the most specific of its references gives it. An Application
// two ImageUpdaters select is handled by both, as by Argo CD Image
// Updater.
func (u *Updater) selected(ctx context.Context, st config.Settings, owners []*owner) ([]watched, error) {
	byNamespace := map[string][]*v1alpha1.Application{}
	var out []watched
	for _, o := range owners {
		if o.invalid != nil {
			continue
		}
		apps, listed := byNamespace[o.obj.Namespace]
		if !listed {
			err := u.eachApplication(ctx, o.obj.Namespace, func(app *v1alpha1.Application) {
				apps = append(apps, app)
			})
			if err != nil {
				return nil, err
			}
			byNamespace[o.obj.Namespace] = apps
		}
		for _, app := range apps {
			conf, errs := config.ForApplication(o.obj, app)
			if conf == nil {
				continue
			}
			for i, err := range errs {
				errs[i] = fmt.Errorf("in Application/%s/%s: %w", app.Namespace, app.Name, err)
				u.fail(st, app, "InvalidConfiguration", fmt.Errorf("ImageUpdater/%s/%s: %w", o.obj.Namespace, o.obj.Name, err))
			}
			o.apps++
			o.images += len(conf.Images)
			o.record(errs, nil)
			out = append(out, watched{app: app.DeepCopy(), conf: conf, owner: o})
		}
	}
	return out, nil
}

// writeStatus records a cycle's outcome in each ImageUpdater's status, as
// Argo CD Image Updater does: counts, times, the updates written and the
// Ready and Error conditions. An ImageUpdater that is not valid gets the
// reason in both conditions and an Event.
func (u *Updater) writeStatus(ctx context.Context, st config.Settings, owners []*owner, webhook bool) {
	if u.opts.DryRun {
		return
	}
	now := metav1.NewTime(time.Now())
	for _, o := range owners {
		before := o.obj.DeepCopy()
		s := &o.obj.Status
		gen := o.obj.Generation
		s.ObservedGeneration = gen
		if !webhook { // a webhook's cycle checks only the pushed images
			s.LastCheckedAt = &now
			s.ApplicationsMatched, s.ImagesManaged = int32(o.apps), int32(o.images)
		}
		if len(o.written) > 0 {
			s.LastUpdatedAt = &now
			s.RecentUpdates = recentUpdates(o.written, now)
		}
		set := func(typ string, status metav1.ConditionStatus, reason, msg string) {
			apimeta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: bounded(msg), ObservedGeneration: gen})
		}
		set(iuv1.ConditionReconciling, metav1.ConditionFalse, "Idle", "Last check completed. Awaiting next cycle.")
		switch {
		case o.invalid != nil:
			set(iuv1.ConditionError, metav1.ConditionTrue, "ReconcileError", o.invalid.Error())
			set(iuv1.ConditionReady, metav1.ConditionFalse, "ReconcileFailed", "Reconciliation failed: "+o.invalid.Error())
			if u.opts.Events != nil && st.KubeEvents && before.Status.ObservedGeneration != gen {
				u.opts.Events.Eventf(o.obj, corev1.EventTypeWarning, "InvalidConfiguration", "%s", o.invalid.Error())
			}
		case o.errors > 0:
			set(iuv1.ConditionError, metav1.ConditionTrue, "PartialErrors",
				fmt.Sprintf("%d error(s) occurred during image update checks (the Applications' Events list them); the first: %v", o.errors, o.first))
			set(iuv1.ConditionReady, metav1.ConditionTrue, "ReconcileCompletedWithErrors",
				fmt.Sprintf("Reconciled %d applications with %d errors, %d images updated.", o.apps, o.errors, len(o.written)))
		default:
			set(iuv1.ConditionError, metav1.ConditionFalse, "NoErrors", "No errors during last reconciliation.")
			set(iuv1.ConditionReady, metav1.ConditionTrue, "ReconcileSucceeded",
				fmt.Sprintf("Reconciled %d applications, %d images updated.", o.apps, len(o.written)))
		}
		if err := u.opts.Client.Status().Patch(ctx, o.obj, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
			u.opts.Log.Error("Could not write the ImageUpdater's status", "imageupdater", o.obj.Namespace+"/"+o.obj.Name, "error", err.Error())
		}
	}
}

// maxMessage bounds a condition's message (an error may carry a long
// answer of a registry or of git).
const maxMessage = 2048

func bounded(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

// recentUpdates sums a cycle's written changes by image and version.
func recentUpdates(changes []writeback.Change, now metav1.Time) []iuv1.RecentUpdate {
	var out []iuv1.RecentUpdate
	for _, c := range changes {
		alias := c.Image.Alias
		if alias == "" {
			alias = c.Name
		}
		version := c.NewTag
		if c.Digest != "" {
			version += "@" + c.Digest
		}
		i := slices.IndexFunc(out, func(r iuv1.RecentUpdate) bool { return r.Alias == alias && r.NewVersion == version })
		if i >= 0 {
			out[i].ApplicationsUpdated++
			continue
		}
		out = append(out, iuv1.RecentUpdate{Alias: alias, Image: c.Name, NewVersion: version, ApplicationsUpdated: 1, UpdatedAt: now,
			Message: fmt.Sprintf("Updated from %s to %s.", orUnknown(c.OldTag), version)})
	}
	return out
}

func orUnknown(tag string) string {
	if tag == "" {
		return "an unknown version"
	}
	return tag
}
