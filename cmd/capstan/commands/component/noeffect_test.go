package component

import "testing"

// TestNoEffectReasons: every variable a component accepts without acting
// on it has its reason.
func TestNoEffectReasons(t *testing.T) {
	for _, list := range [][]string{serverNoEffect, controllerNoEffect, repoServerNoEffect, appSetNoEffect} {
		for _, name := range list {
			if noEffect[name] == "" {
				t.Errorf("%s has no reason in noEffect", name)
			}
		}
	}
}
