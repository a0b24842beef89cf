package controller

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/project"
)

// checkProject returns the Application's AppProject, or why the project
// does not allow the Application to deploy to dst.
func (r *reconciler) checkProject(ctx context.Context, app *v1alpha1.Application, dst *cluster.Cluster) (*v1alpha1.AppProject, error) {
	name := cmp.Or(app.Spec.Project, v1alpha1.DefaultAppProjectName)
	proj, err := project.Load(ctx, r.client, r.opts.Namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("application references project %s which does not exist", name)
	}
	if err != nil {
		return nil, err
	}
	dest := project.Destination{Server: dst.Server, Name: dst.Name, Namespace: app.Spec.Destination.Namespace}
	if err := project.CheckApplication(proj, app, r.opts.Namespace, dest); err != nil {
		return nil, err
	}
	return proj, nil
}

// projectApps maps a changed AppProject to its Applications, so a change
// of its permissions or sync windows is acted on at once.
func projectApps(namespaces appNamespaces) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		apps, err := namespaces.list(ctx)
		if err != nil {
			return nil
		}
		var out []reconcile.Request
		for _, app := range apps {
			if cmp.Or(app.Spec.Project, v1alpha1.DefaultAppProjectName) == obj.GetName() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(app)})
			}
		}
		return out
	}
}

// windowVerdict is what a project's sync windows say of an operation.
type windowVerdict struct {
	blocked bool
	// err is a window that cannot be read (which blocks every sync).
	err error
	// again is when the windows next open or close, to decide again.
	again time.Duration
}

// checkWindows decides whether the sync windows of the app's project let
// op run now, as Argo CD does; a manual sync may pass where an automated
// one may not.
func checkWindows(app *v1alpha1.Application, proj *v1alpha1.AppProject, op *v1alpha1.Operation, now time.Time) windowVerdict {
	ws := project.MatchWindows(proj, app)
	manual := !op.InitiatedBy.Automated
	ok, err := ws.CanSync(manual, now)
	if started := startedAt(app, op); !ok && !started.IsZero() {
		ok, err = ws.CanContinue(manual, started, now)
	}
	if ok {
		return windowVerdict{}
	}
	v := windowVerdict{blocked: true, err: err, again: time.Minute}
	if next := ws.NextChange(now); !next.IsZero() {
		v.again = next.Sub(now) + time.Second
	}
	return v
}

// startedAt is when op began to sync, or zero when it has not: an
// operation held by its windows is Running too, but has not started.
func startedAt(app *v1alpha1.Application, op *v1alpha1.Operation) time.Time {
	st := app.Status.OperationState
	if st == nil || st.Phase != v1alpha1.OperationRunning || strings.HasPrefix(st.Message, project.OperationBlockedBySyncWindow) ||
		!equality.Semantic.DeepEqual(st.Operation, *op) {
		return time.Time{}
	}
	return st.StartedAt.Time
}

// holdOperation records that a requested operation waits for its sync
// windows: Running, with Argo CD's message (and the window's error).
func holdOperation(app *v1alpha1.Application, op *v1alpha1.Operation, v windowVerdict) {
	msg := project.OperationBlockedBySyncWindow
	if v.err != nil {
		msg += ": " + v.err.Error()
	}
	st := app.Status.OperationState
	if st == nil || st.Phase != v1alpha1.OperationRunning || !equality.Semantic.DeepEqual(st.Operation, *op) {
		st = &v1alpha1.OperationState{Operation: *op, Phase: v1alpha1.OperationRunning, StartedAt: metav1.Now()}
		app.Status.OperationState = st
	}
	st.Message = msg
}
