package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// finishRetries bounds how often the final write of an operation is tried
// again after the Application changed under it.
const finishRetries = 10

// statusWriter persists an Application's status as merge patches against
// the last state it wrote. Only status fields are sent, and without a
// resourceVersion, so a user's change to the spec in between never makes
// a status write fail; finish, which also clears the operation, is the
// one write that checks the Application did not change.
type statusWriter struct {
	client  client.Client
	written *writtenVersions
	base    *v1alpha1.Application
}

// next is the last written Application with app's status, and without
// the refresh annotation once app has answered it.
func (w *statusWriter) next(app *v1alpha1.Application) *v1alpha1.Application {
	next := w.base.DeepCopy()
	next.Status = *app.Status.DeepCopy()
	if _, asked := app.Annotations[v1alpha1.AnnotationRefresh]; !asked {
		delete(next.Annotations, v1alpha1.AnnotationRefresh)
	}
	return next
}

// write persists app's status.
func (w *statusWriter) write(ctx context.Context, app *v1alpha1.Application) error {
	next := w.next(app)
	if err := w.patch(ctx, next, statusPatch{base: w.base}); err != nil {
		return fmt.Errorf("updating status of Application/%s/%s: %w", app.Namespace, app.Name, err)
	}
	w.done(app, next)
	return nil
}

// finish persists app's status and, in the same write, clears the
// operation ran, so that a finished operation is never run again nor its
// result lost, whenever the controller stops. A conflicting change is
// read back and the write tried again; an operation requested in the
// meantime (one other than ran) is left in place for the next reconcile.
func (w *statusWriter) finish(ctx context.Context, app *v1alpha1.Application, ran *v1alpha1.Operation) error {
	for attempt := 0; ; attempt++ {
		next := w.next(app)
		patch := statusPatch{base: w.base}
		if next.Operation != nil && equality.Semantic.DeepEqual(*next.Operation, *ran) {
			next.Operation = nil
			patch.lock = true
		}
		err := w.patch(ctx, next, patch)
		if err == nil {
			w.done(app, next)
			app.Operation = next.Operation
			return nil
		}
		if !apierrors.IsConflict(err) || attempt >= finishRetries {
			return fmt.Errorf("recording the operation's result on Application/%s/%s: %w", app.Namespace, app.Name, err)
		}
		select { // the cache the client reads may lag the write that conflicted
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		}
		fresh := &v1alpha1.Application{}
		if err := w.client.Get(ctx, client.ObjectKeyFromObject(app), fresh); err != nil {
			return fmt.Errorf("reading Application/%s/%s again: %w", app.Namespace, app.Name, err)
		}
		w.base = fresh
	}
}

// patch sends the patch turning the last written Application into next,
// and takes from the answer only its metadata: the API server sends back
// no more than that, and the rest of next is what was written. (Decoding
// the whole Application the API server would otherwise encode and send
// back was half of the write's cost to the controller.)
func (w *statusWriter) patch(ctx context.Context, next *v1alpha1.Application, patch client.Patch) error {
	data, err := patch.Data(next)
	if err != nil {
		return err
	}
	meta := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Application"},
		ObjectMeta: metav1.ObjectMeta{Namespace: next.Namespace, Name: next.Name},
	}
	if err := w.client.Patch(ctx, meta, client.RawPatch(patch.Type(), data)); err != nil {
		return err
	}
	next.ObjectMeta = meta.ObjectMeta
	return nil
}

// done records a successful write: the next patch is computed against it.
func (w *statusWriter) done(app, written *v1alpha1.Application) {
	w.written.note(written)
	app.ResourceVersion = written.ResourceVersion
	w.base = written
}
