package server

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/project"
)

// auditComponent is the source of the API server's Events, as Argo CD
// names it.
const auditComponent = "argocd-server"

// The reasons of the API server's Events, as Argo CD gives them.
const (
	reasonCreated   = "ResourceCreated"
	reasonUpdated   = "ResourceUpdated"
	reasonDeleted   = "ResourceDeleted"
	reasonOperation = "OperationStarted"
	reasonActionRan = "ResourceActionRan"
)

// audit records what a caller did to an Application or AppProject as a
// Kubernetes Event on it ("admin initiated sync to main"), as Argo CD's
// API server does: the application's and project's Events lists show it.
// An Application's Event carries the labels argocd-cm asks for
// (project.EventLabels).
// A failure to record is logged, never the caller's error.
func (s *Server) audit(ctx context.Context, c *caller, obj client.Object, reason, action string) {
	gvk, err := apiutil.GVKForObject(obj, s.opts.Client.Scheme())
	if err != nil {
		s.opts.Log.Warn("recording an audit event", "error", err)
		return
	}
	user := "Unknown user"
	if c != nil && c.claims != nil && c.claims.Subject != "" {
		user = c.claims.Subject
	}
	now := time.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", obj.GetName(), now.UnixNano()), Namespace: obj.GetNamespace()},
		InvolvedObject: corev1.ObjectReference{Kind: gvk.Kind, APIVersion: gvk.GroupVersion().String(), Name: obj.GetName(),
			Namespace: obj.GetNamespace(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()},
		Source:         corev1.EventSource{Component: auditComponent},
		FirstTimestamp: metav1.NewTime(now), LastTimestamp: metav1.NewTime(now), Count: 1,
		Type: corev1.EventTypeNormal, Reason: reason, Message: user + " " + action,
	}
	// The caller's request may end before the Event is written.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if app, ok := obj.(*v1alpha1.Application); ok {
		if ev.Labels, err = project.EventLabels(ctx, s.opts.Client, s.opts.Namespace, app); err != nil {
			s.opts.Log.Warn("labelling an audit event", "object", "Application/"+app.Namespace+"/"+app.Name, "error", err)
		}
	}
	if err := s.opts.Client.Create(ctx, ev); err != nil {
		s.opts.Log.Warn("recording an audit event", "object", gvk.Kind+"/"+obj.GetNamespace()+"/"+obj.GetName(), "error", err)
	}
}
