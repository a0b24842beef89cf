package rbac

import (
	"slices"
	"testing"
)

// TestBuiltinRolesOverEveryResource enumerates every resource and action
// of the model against the built-in roles: role:readonly reads all but
// exec and extensions, role:admin may also do what Argo CD's built-in
// policy lets it, and nobody else anything. A constant that names a
// resource or action the policy spells differently fails here.
func TestBuiltinRolesOverEveryResource(t *testing.T) {
	e, err := New(Policy{})
	if err != nil {
		t.Fatal(err)
	}
	changes := []Action{ActionCreate, ActionUpdate, ActionDelete}
	adminMay := map[Resource][]Action{
		ResourceApplications:      {ActionCreate, ActionUpdate, ActionDelete, ActionSync, ActionOverride, ResourceAction("apps", "Deployment", "restart"), ActionUpdate.On("apps", "Deployment", "web", "guestbook")},
		ResourceApplicationSets:   changes,
		ResourceClusters:          changes,
		ResourceProjects:          changes,
		ResourceRepositories:      changes,
		ResourceWriteRepositories: changes,
		ResourceCertificates:      changes,
		ResourceGPGKeys:           {ActionCreate, ActionDelete},
		ResourceAccounts:          {ActionUpdate},
		ResourceExec:              {ActionCreate},
	}
	all := []Action{ActionGet, ActionCreate, ActionUpdate, ActionDelete, ActionSync, ActionOverride, ActionInvoke,
		ResourceAction("apps", "Deployment", "restart"), ActionUpdate.On("apps", "Deployment", "web", "guestbook")}
	for _, r := range Resources {
		obj := "guestbook"
		if r.ProjectScoped() {
			obj = "default/guestbook"
		}
		for _, a := range all {
			readonly := a == ActionGet && r != ResourceExec && r != ResourceExtensions
			admin := readonly || slices.Contains(adminMay[r], a)
			if got := e.Enforce([]string{"role:readonly"}, r, a, obj); got != readonly {
				t.Errorf("role:readonly %s %s: %v, want %v", r, a, got, readonly)
			}
			if got := e.Enforce([]string{"admin"}, r, a, obj); got != admin {
				t.Errorf("admin %s %s: %v, want %v", r, a, got, admin)
			}
			if e.Enforce([]string{"someone"}, r, a, obj) {
				t.Errorf("a user without roles may %s %s", a, r)
			}
		}
	}
}

func TestResourceNames(t *testing.T) {
	if !ResourceGPGKeys.Known() || Resource("deployments").Known() {
		t.Error("Known does not follow Resources")
	}
	if got := ResourceAction("apps", "Deployment", "restart"); got != "action/apps/Deployment/restart" {
		t.Errorf("ResourceAction = %s", got)
	}
	if got := ActionDelete.On("", "Pod", "ns", "web-0"); got != "delete//Pod/ns/web-0" {
		t.Errorf("On = %s", got)
	}
}
