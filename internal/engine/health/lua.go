package health

import (
	"context"
	"errors"
	"fmt"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/internal/engine/script"
	"github.com/capstan-cd/capstan/internal/settings"
)

// customCheck is a Lua health script for kinds matching group/kind globs.
type customCheck struct {
	key     string
	group   *glob.Pattern
	kind    *glob.Pattern
	program *script.Program
	// broken is why the script cannot run (it does not compile): the
	// kinds it is for are Unknown with this error, and no others suffer.
	broken error
}

// parseCustomChecks reads argocd-cm's custom health checks (see
// settings.ArgoCD.Customizations; "*" globs allowed in group and kind). A
// key that cannot be read is named in the error and affects only its
// kinds: a script that does not compile makes them Unknown.
func parseCustomChecks(cm map[string]string) ([]customCheck, error) {
	custom, err := (&settings.ArgoCD{Data: cm}).Customizations("health")
	errs := []error{err}
	var checks []customCheck
	for _, c := range custom {
		if err := addCheck(&checks, c); err != nil {
			errs = append(errs, err)
		}
	}
	return checks, errors.Join(errs...)
}

// addCheck adds the check of one customization. A script that does not
// compile is still added, broken, so that its kinds report the error.
func addCheck(checks *[]customCheck, c settings.Customization) error {
	gg, err := glob.Compile(c.Group)
	if err != nil {
		return fmt.Errorf("argocd-cm %s: group %q: %w", c.Key, c.Group, err)
	}
	kg, err := glob.Compile(c.Kind)
	if err != nil {
		return fmt.Errorf("argocd-cm %s: kind %q: %w", c.Key, c.Kind, err)
	}
	check := customCheck{key: c.Key, group: gg, kind: kg}
	if check.program, err = compileLua(c.Value); err != nil {
		check.broken = fmt.Errorf("argocd-cm %s: %w", c.Key, err)
	}
	*checks = append(*checks, check)
	return check.broken
}

func (c *Checker) customFor(gk schema.GroupKind) (customCheck, bool) {
	for _, check := range c.custom {
		if check.group.Match(gk.Group) && check.kind.Match(gk.Kind) {
			return check, true
		}
	}
	return customCheck{}, false
}

// compileLua compiles a health check once, for every object it judges.
func compileLua(src string) (*script.Program, error) {
	p, err := script.Prepare(src)
	if err != nil {
		return nil, fmt.Errorf("health.lua does not compile: %w", err)
	}
	return p, nil
}

// run executes the script with the object as the global obj, as Argo CD's
// contract says, and reads the returned {status, message} table.
func (c customCheck) run(obj *unstructured.Unstructured) (Status, error) {
	if c.broken != nil {
		return Status{}, c.broken
	}
	ret, err := c.program.Run(context.Background(), obj.Object, nil)
	if err != nil {
		return Status{}, fmt.Errorf("%s: %w", c.key, err)
	}
	return statusOf(c.key, ret)
}
