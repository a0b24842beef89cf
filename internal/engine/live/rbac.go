package live

import (
	"context"
	"fmt"

	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RBACMode is argocd-cm's resource.respectRBAC: what watching a kind the
// controller may not list does.
type RBACMode int

const (
	// RBACIgnored (unset) makes a kind that cannot be listed an error,
	// as Argo CD's default.
	RBACIgnored RBACMode = iota
	// RBACNormal ("normal") leaves a kind whose listing is refused
	// unwatched.
	RBACNormal
	// RBACStrict ("strict") leaves a kind whose listing is refused
	// unwatched once a SelfSubjectAccessReview confirms that listing it is
	// not allowed; a refusal the review contradicts is waited out.
	RBACStrict
)

// ParseRBACMode reads a resource.respectRBAC value: "", "normal" or
// "strict".
func ParseRBACMode(v string) (RBACMode, error) {
	switch v {
	case "":
		return RBACIgnored, nil
	case "normal":
		return RBACNormal, nil
	case "strict":
		return RBACStrict, nil
	}
	return RBACIgnored, fmt.Errorf("argocd-cm resource.respectRBAC: %q is neither normal nor strict", v)
}

// RestrictedError says a kind is left unwatched because the controller
// may not list it (resource.respectRBAC). Its objects can still be read
// one by one, when the controller may get them.
type RestrictedError struct {
	Resource schema.GroupResource
	Err      error
}

func (e *RestrictedError) Error() string {
	return fmt.Sprintf("%s is not watched, as the controller may not list it (resource.respectRBAC): %v", e.Resource, e.Err)
}

func (e *RestrictedError) Unwrap() error { return e.Err }

// mayList asks the API server whether the controller may list a kind
// where the cache watches it: in every namespace, or in one of the
// namespaces it is limited to.
func (c *Cache) mayList(ctx context.Context, m *meta.RESTMapping) (bool, error) {
	namespaces := []string{metav1.NamespaceAll}
	if len(c.opts.Namespaces) > 0 && m.Scope.Name() == meta.RESTScopeNameNamespace {
		namespaces = c.opts.Namespaces
	}
	for _, ns := range namespaces {
		review := &authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
			Namespace: ns, Verb: "list", Group: m.Resource.Group, Version: m.Resource.Version, Resource: m.Resource.Resource,
		}}}
		got, err := c.authz.Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		if got.Status.Allowed {
			return true, nil
		}
	}
	return false, nil
}
