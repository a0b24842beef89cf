package server

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// managedSecret is a Secret the API writes for one repository,
// credential template or cluster, with how to find the stored Secret that
// holds the same object and who may replace it.
type managedSecret struct {
	secret *corev1.Secret
	// what names the object in messages ("repository", "cluster").
	what string
	// stored returns the stored Secret that holds the same object (the
	// same URL and project, the same server), or nil.
	stored func(ctx context.Context) (*corev1.Secret, error)
	// mayReplace checks that the caller may replace that stored Secret
	// (update on its own RBAC object).
	mayReplace func(stored *corev1.Secret) error
}

// storeSecret creates a managed Secret. When a stored Secret holds the
// same object, an identical one is fine and a different one is replaced
// only with upsert and the caller's update permission on it, as Argo CD
// does. A Secret is found by what it holds, never by its name: one that
// has the new Secret's name but holds another object is never replaced.
func (s *Server) storeSecret(ctx context.Context, m managedSecret, upsert bool) error {
	existing, err := m.stored(ctx)
	if err != nil {
		return err
	}
	if existing == nil {
		err := s.opts.Client.Create(ctx, m.secret)
		if err == nil {
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Secret/%s/%s: %w", m.secret.Namespace, m.secret.Name, err)
		}
		// Created meanwhile by another request, or a name another object
		// holds: only the first is this object.
		if existing, err = m.stored(ctx); err != nil {
			return err
		}
		if existing == nil {
			return conflict(fmt.Sprintf("Secret/%s/%s exists and holds another %s; it is left as it is", m.secret.Namespace, m.secret.Name, m.what))
		}
	}
	if maps.EqualFunc(existing.Data, m.secret.Data, func(a, b []byte) bool { return string(a) == string(b) }) {
		return nil
	}
	if !upsert {
		return badRequest(fmt.Sprintf("existing %s spec is different; use upsert flag to force update", m.what))
	}
	if err := m.mayReplace(existing); err != nil {
		return err
	}
	return s.replaceSecret(ctx, existing, m.secret)
}

// replaceSecret writes a managed Secret's data, labels and annotations
// into the stored Secret, which keeps its name.
func (s *Server) replaceSecret(ctx context.Context, stored, with *corev1.Secret) error {
	stored.Data, stored.Labels, stored.Annotations = with.Data, with.Labels, with.Annotations
	if err := s.opts.Client.Update(ctx, stored); err != nil {
		return fmt.Errorf("updating Secret/%s/%s: %w", stored.Namespace, stored.Name, err)
	}
	return nil
}

// secretNamed reads a Secret of the control namespace by name.
func (s *Server) secretNamed(ctx context.Context, name string) (*corev1.Secret, error) {
	sec := &corev1.Secret{}
	if err := s.opts.Client.Get(ctx, client.ObjectKey{Namespace: s.opts.Namespace, Name: name}, sec); err != nil {
		return nil, fmt.Errorf("reading Secret/%s/%s: %w", s.opts.Namespace, name, err)
	}
	return sec, nil
}

// deleteSecret deletes a Secret the API manages; a missing one is fine.
func (s *Server) deleteSecret(ctx context.Context, name string) error {
	sec := &corev1.Secret{}
	sec.Namespace, sec.Name = s.opts.Namespace, name
	if err := s.opts.Client.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Secret/%s/%s: %w", s.opts.Namespace, name, err)
	}
	return nil
}
