package live

import (
	"context"
	"errors"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var secretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// TestRespectRBAC: a kind the identity may not list is an error at once
// by default (not a wait for a listing that never comes); with
// resource.respectRBAC "normal" or "strict" it is left unwatched as a
// *RestrictedError, and the kinds it may list are watched as before.
func TestRespectRBAC(t *testing.T) {
	localcluster.Need(t)
	ns := cluster.NewNamespace(t)
	cfg := cluster.ConfigAs(t, "respect-rbac-"+ns, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews"}, Verbs: []string{"create"}},
	})
	ctx := context.Background()
	for _, tt := range []struct {
		name, value string
		mode        RBACMode
	}{{"unset", "", RBACIgnored}, {"normal", "normal", RBACNormal}, {"strict", "strict", RBACStrict}} {
		t.Run(tt.name, func(t *testing.T) {
			mode, err := ParseRBACMode(tt.value)
			if err != nil || mode != tt.mode {
				t.Fatalf("ParseRBACMode(%q) = %v, %v", tt.value, mode, err)
			}
			c, err := New(cfg, Options{RespectRBAC: func() RBACMode { return mode }})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Stop()
			if err := c.Watch(ctx, configMapGVK); err != nil {
				t.Fatalf("watching what it may list: %v", err)
			}
			// Several reconciles may wait for the same new kind at once:
			// each gets the refusal, none waits out the timeout.
			errs := make(chan error, 3)
			for range 3 {
				go func() { errs <- c.Watch(ctx, secretGVK) }()
			}
			err = <-errs
			for range 2 {
				if other := <-errs; (other == nil) != (err == nil) || errors.As(other, new(*RestrictedError)) != errors.As(err, new(*RestrictedError)) {
					t.Errorf("concurrent watches disagree: %v and %v", err, other)
				}
			}
			var restricted *RestrictedError
			switch {
			case err == nil:
				t.Fatal("watching what it may not list succeeded")
			case mode == RBACIgnored && (errors.As(err, &restricted) || !strings.Contains(err.Error(), "forbidden")):
				t.Errorf("without respectRBAC: %v, want the refusal as an error", err)
			case mode != RBACIgnored && !errors.As(err, &restricted):
				t.Errorf("with respectRBAC %s: %v, want a RestrictedError", tt.name, err)
			}
			if got := c.Restricted(secretGVK); got != (mode != RBACIgnored) {
				t.Errorf("Restricted(Secret) = %v", got)
			}
			if mode != RBACIgnored {
				if err := c.Watch(ctx, secretGVK); !errors.As(err, &restricted) {
					t.Errorf("watching it again: %v, want the RestrictedError at once", err)
				}
				if _, kinds := c.Stats(); kinds != 1 {
					t.Errorf("%d kinds watched, want the ConfigMaps only", kinds)
				}
			}
		})
	}
	if _, err := ParseRBACMode("always"); err == nil {
		t.Error("an unknown resource.respectRBAC value was accepted")
	}
}
