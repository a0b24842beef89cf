package commands

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/component"
	"github.com/capstan-cd/capstan/internal/profiler"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

// installContainers are the containers of the install's workloads, by
// workload name.
func installContainers(t *testing.T) map[string][]corev1.Container {
	t.Helper()
	out := map[string][]corev1.Container{}
	for name, pod := range installPods(t) {
		out[name] = pod.Containers
	}
	return out
}

// mountedParams are the argocd-cmd-params-cm keys the install mounts as
// files where a component reads them (the profiler settings at
// profiler.DefaultPath).
func mountedParams(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for workload, pod := range installPods(t) {
		for _, v := range pod.Volumes {
			if v.ConfigMap == nil || v.ConfigMap.Name != settings.CmdParamsName {
				continue
			}
			mounted := false
			for _, m := range pod.Containers[0].VolumeMounts {
				mounted = mounted || (m.Name == v.Name && m.MountPath == filepath.Dir(profiler.DefaultPath))
			}
			for _, item := range v.ConfigMap.Items {
				if !mounted || item.Path != filepath.Base(profiler.DefaultPath) {
					t.Errorf("%s mounts %s of %s where nothing reads it", workload, item.Key, settings.CmdParamsName)
					continue
				}
				out[item.Key] = true
			}
		}
	}
	return out
}

// installPods are the pod templates of install.yaml's workloads, by name.
func installPods(t *testing.T) map[string]corev1.PodSpec {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "manifests", "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]corev1.PodSpec{}
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 1<<20)
	for {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec appsv1.DeploymentSpec `json:"spec"` // a StatefulSet's template is at the same path
		}
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if obj.Kind == "Deployment" || obj.Kind == "StatefulSet" {
			out[obj.Metadata.Name] = obj.Spec.Template.Spec
		}
	}
}

// documentedParams are the example values of Argo CD's documented
// argocd-cmd-params-cm.
func documentedParams(t *testing.T) map[string]string {
	t.Helper()
	return toolbin.ArgoCDDocumentedConfigMap(t, "argocd-cmd-params-cm.yaml")
}

// TestEveryParamIsRead: each variable the install sets on a component from
// argocd-cmd-params-cm is one that component reads, and with every key set
// to the value Argo CD's documentation shows, each component starts (its
// flags take the values) and names each setting that changes nothing in
// Capstan; each one it acts on says how (the flag it sets, or what it tunes).
func TestEveryParamIsRead(t *testing.T) {
	documented := documentedParams(t)
	checked := 0
	passed := map[string]bool{} // keys the install hands to a component
	for workload, containers := range installContainers(t) {
		c := containers[0]
		if len(c.Command) == 0 {
			continue // Redis, run by its image
		}
		program, args := Program(filepath.Base(c.Command[0]), append(slices.Clone(c.Command[1:]), c.Args...))
		if program != "capstan" || len(args) == 0 {
			continue
		}
		t.Run(workload, func(t *testing.T) {
			root, release := newRootAs("capstan")
			defer release()
			cmd, _, err := root.Find(args)
			if err != nil {
				t.Fatal(err)
			}
			reads := strings.Split(cmd.Annotations[component.EnvAnnotation], ",")
			var accepted []string
			for _, e := range c.Env {
				ref := e.ValueFrom
				if ref == nil || ref.ConfigMapKeyRef == nil || ref.ConfigMapKeyRef.Name != settings.CmdParamsName {
					continue
				}
				checked++
				passed[ref.ConfigMapKeyRef.Key] = true
				if !slices.Contains(reads, e.Name) {
					t.Errorf("%s (key %s) is set by the install but not read by %s", e.Name, ref.ConfigMapKeyRef.Key, cmd.CommandPath())
				}
				if slices.Contains(strings.Split(cmd.Annotations[component.NoEffectAnnotation], ","), e.Name) {
					accepted = append(accepted, e.Name)
				} else if component.EnvUse(cmd, e.Name) == "" {
					t.Errorf("%s (key %s) is acted on by %s, but nothing says how (no flag bound to it, no entry in directEnv)", e.Name, ref.ConfigMapKeyRef.Key, cmd.CommandPath())
				}
				if v, ok := documented[ref.ConfigMapKeyRef.Key]; ok {
					t.Setenv(e.Name, v)
				}
			}
			var stderr bytes.Buffer
			cmd.SetErr(&stderr)
			if err := cmd.ParseFlags(nil); err != nil {
				t.Fatal(err)
			}
			if cmd.PreRunE == nil {
				return // a component reading no argocd-cmd-params-cm variable (the image updater)
			}
			if err := cmd.PreRunE(cmd, nil); err != nil {
				t.Fatalf("with Argo CD's documented values: %v", err)
			}
			for _, name := range accepted {
				if os.Getenv(name) != "" && !strings.Contains(stderr.String(), `"variable":"`+name+`"`) {
					t.Errorf("%s is set, changes nothing, and was not logged", name)
				}
			}
		})
	}
	for key := range mountedParams(t) {
		passed[key] = true
	}
	// A documented key no component is handed is one no component reads:
	// it must be listed, with its reason, for the controller to log it.
	unread := map[string]bool{}
	for _, k := range settings.UnreadCmdParams() {
		unread[k.Key] = true
		if passed[k.Key] {
			t.Errorf("%s is listed as read by no component, but the install hands it to one", k.Key)
		}
	}
	for key := range documented {
		if !passed[key] && !unread[key] {
			t.Errorf("Argo CD documents %s, which no component is handed and none is said not to read: it would be silent", key)
		}
	}
	if checked < 150 {
		t.Errorf("only %d variables checked", checked)
	}
}
