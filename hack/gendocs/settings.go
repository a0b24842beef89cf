package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/capstan-cd/capstan/cmd/capstan/commands"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/component"
	"github.com/capstan-cd/capstan/internal/profiler"
	"github.com/capstan-cd/capstan/internal/settings"
)

// argoCDConfigMapReference lists argocd-cm's documented keys and what
// Capstan does with each.
func argoCDConfigMapReference() (string, error) {
	var b strings.Builder
	b.WriteString("# argocd-cm keys\n\n")
	b.WriteString("Every key of `argocd-cm` that Argo CD documents. A key Capstan acts on behaves as Argo CD documents it; " +
		"one with no effect is accepted and logged once by the application controller, with the reason below. " +
		"A key Argo CD does not document is logged as unknown. Keys ending in `.` are families (`accounts.<name>`).\n\n")
	b.WriteString("| Key | In Capstan |\n|---|---|\n")
	for _, k := range settings.DocumentedKeys() {
		what := "acted on"
		if k.Reason != "" {
			what = "no effect: " + k.Reason
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", k.Key, cell(what))
	}
	return b.String(), nil
}

// paramUse is one argocd-cmd-params-cm key as a component reads it.
type paramUse struct {
	key, variable, command, reason string
	// use is what the component does with an acted-on key (EnvUse).
	use string
}

// cmdParamsReference lists each argocd-cmd-params-cm key the install
// passes to a component, with the component and what it does with it.
func cmdParamsReference(install []byte) (string, error) {
	uses, err := paramUses(install)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# argocd-cmd-params-cm keys\n\n")
	b.WriteString("Every key of `argocd-cmd-params-cm` the install passes to a component, as the environment variable Argo CD's " +
		"manifests name, or the file they mount it as. A key Capstan acts on sets the component's flag of the same meaning (a flag given on the command line wins); " +
		"one with no effect is logged once when the component starts, with the reason below.\n\n")
	b.WriteString("| Key | Variable | Component | In Capstan |\n|---|---|---|---|\n")
	for _, u := range uses {
		what := "acted on: " + u.use
		if u.reason != "" {
			what = "no effect: " + u.reason
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s |\n", u.key, u.variable, u.command, cell(what))
	}
	b.WriteString("\n## Keys no component reads\n\n")
	b.WriteString("Keys Argo CD documents that the install hands to no Capstan component. " +
		"The application controller logs each one set, once per version of the ConfigMap, with the reason below.\n\n")
	b.WriteString("| Key | Why it has no effect |\n|---|---|\n")
	for _, k := range settings.UnreadCmdParams() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k.Key, cell(k.Reason))
	}
	return b.String(), nil
}

// paramUses reads the install's workloads and, for each variable set
// from argocd-cmd-params-cm, the command that runs and what it does with it.
func paramUses(install []byte) ([]paramUse, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(install), 1<<20)
	var uses []paramUse
	for {
		var obj struct {
			Kind string                `json:"kind"`
			Spec appsv1.DeploymentSpec `json:"spec"` // a StatefulSet's template is at the same path
		}
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		if obj.Kind != "Deployment" && obj.Kind != "StatefulSet" {
			continue
		}
		for _, c := range obj.Spec.Template.Spec.Containers {
			if len(c.Command) == 0 {
				continue
			}
			program, args := commands.Program(filepath.Base(c.Command[0]), append(slices.Clone(c.Command[1:]), c.Args...))
			if program != "capstan" || len(args) == 0 {
				continue
			}
			cmd, _, err := commands.NewRoot().Find(args)
			if err != nil {
				return nil, err
			}
			noEffect := strings.Split(cmd.Annotations[component.NoEffectAnnotation], ",")
			for _, e := range c.Env {
				ref := e.ValueFrom
				if ref == nil || ref.ConfigMapKeyRef == nil || ref.ConfigMapKeyRef.Name != settings.CmdParamsName {
					continue
				}
				u := paramUse{key: ref.ConfigMapKeyRef.Key, variable: e.Name, command: cmd.CommandPath()}
				if slices.Contains(noEffect, e.Name) {
					u.reason = component.NoEffectReason(e.Name)
				} else {
					u.use = component.EnvUse(cmd, e.Name)
				}
				uses = append(uses, u)
			}
			// Keys mounted as files (the profiler setting), read by the
			// workload's first container.
			for _, v := range obj.Spec.Template.Spec.Volumes {
				if v.ConfigMap == nil || v.ConfigMap.Name != settings.CmdParamsName {
					continue
				}
				for _, item := range v.ConfigMap.Items {
					uses = append(uses, paramUse{key: item.Key, variable: profiler.DefaultPath, command: cmd.CommandPath(),
						use: "true serves Go's profiles (pprof) on the metrics port"})
				}
			}
			break // the first container is the component
		}
	}
	sort.Slice(uses, func(i, j int) bool {
		if uses[i].key != uses[j].key {
			return uses[i].key < uses[j].key
		}
		return uses[i].command < uses[j].command
	})
	return slices.Compact(uses), nil
}
