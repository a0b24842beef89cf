package server

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// storeSecret creates a Secret the API manages (a repository, credential
// template or cluster). An identical one already there is fine; a
// different one is replaced only with upsert, as Argo CD does. It returns
// the status to answer with and the error.
func (s *Server) storeSecret(ctx context.Context, sec *corev1.Secret, what string, upsert bool) error {
	err := s.opts.Client.Create(ctx, sec)
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Secret/%s/%s: %w", sec.Namespace, sec.Name, err)
	}
	existing := &corev1.Secret{}
	if err := s.opts.Client.Get(ctx, client.ObjectKeyFromObject(sec), existing); err != nil {
		return err
	}
	if maps.EqualFunc(existing.Data, sec.Data, func(a, b []byte) bool { return string(a) == string(b) }) {
		return nil
	}
	if !upsert {
		return badRequest(fmt.Sprintf("existing %s spec is different; use upsert flag to force update", what))
	}
	existing.Data, existing.Labels, existing.Annotations = sec.Data, sec.Labels, sec.Annotations
	if err := s.opts.Client.Update(ctx, existing); err != nil {
		return fmt.Errorf("updating Secret/%s/%s: %w", sec.Namespace, sec.Name, err)
	}
	return nil
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
