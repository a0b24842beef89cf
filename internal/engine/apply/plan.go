// Package sync applies an Application's desired objects to its cluster in
// Argo CD's order: phases PreSync, Sync, PostSync (SyncFail after a
// failure), waves inside each phase, then kinds (Namespaces before the
// workloads that live in them), then names.
package apply

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
)

// Helm's hook annotations, which Argo CD maps onto its own.
const (
	helmHook             = "helm.sh/hook"
	helmHookWeight       = "helm.sh/hook-weight"
	helmHookDeletePolicy = "helm.sh/hook-delete-policy"
)

// DeletePolicy says when a hook object is deleted.
type DeletePolicy string

// Hook delete policies.
const (
	BeforeHookCreation DeletePolicy = "BeforeHookCreation"
	HookSucceeded      DeletePolicy = "HookSucceeded"
	HookFailed         DeletePolicy = "HookFailed"
)

// Task is one object to apply (or prune) at its place in the order.
type Task struct {
	Obj      *unstructured.Unstructured
	Phase    v1alpha1.SyncPhase
	Wave     int
	Hook     bool
	HookType v1alpha1.HookType
	// DeletePolicies apply to hooks; BeforeHookCreation when none is set.
	DeletePolicies []DeletePolicy
	// Options are the object's own argocd.argoproj.io/sync-options.
	Options Options
}

// Plan is the ordered tasks of a sync, by phase.
type Plan struct {
	Phases map[v1alpha1.SyncPhase][]*Task
}

// phaseOrder is the order phases run in; SyncFail runs only after a failure.
var phaseOrder = []v1alpha1.SyncPhase{v1alpha1.SyncPhasePreSync, v1alpha1.SyncPhaseSync, v1alpha1.SyncPhasePostSync}

// kindOrder is the order kinds are applied in within a wave (Helm's install
// order, which Argo CD uses). Kinds not listed come after, by name.
var kindOrder = func() map[string]int {
	kinds := []string{
		"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget",
		"ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass", "PersistentVolume",
		"PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleList",
		"ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList",
		"Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
		"HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService",
	}
	m := make(map[string]int, len(kinds))
	for i, k := range kinds {
		m[k] = i
	}
	return m
}()

// helmHookTypes maps Helm hooks to Argo CD hooks; Helm hooks missing here
// (delete, rollback, test) are not run by a sync.
var helmHookTypes = map[string]v1alpha1.HookType{
	"pre-install":  v1alpha1.HookTypePreSync,
	"pre-upgrade":  v1alpha1.HookTypePreSync,
	"post-install": v1alpha1.HookTypePostSync,
	"post-upgrade": v1alpha1.HookTypePostSync,
}

var helmDeletePolicies = map[string]DeletePolicy{
	"before-hook-creation": BeforeHookCreation,
	"hook-succeeded":       HookSucceeded,
	"hook-failed":          HookFailed,
}

// NewPlan orders objects into tasks. Objects whose hooks are all Skip, or
// whose Helm hooks a sync never runs, are left out.
func NewPlan(objs []*unstructured.Unstructured) (*Plan, error) {
	p := &Plan{Phases: map[v1alpha1.SyncPhase][]*Task{}}
	for _, obj := range objs {
		tasks, err := tasksFor(obj)
		if err != nil {
			return nil, err
		}
		for _, t := range tasks {
			p.Phases[t.Phase] = append(p.Phases[t.Phase], t)
		}
	}
	for _, tasks := range p.Phases {
		sort.SliceStable(tasks, func(i, j int) bool { return less(tasks[i], tasks[j]) })
	}
	return p, nil
}

// Waves returns a phase's tasks grouped by wave, in order.
func (p *Plan) Waves(phase v1alpha1.SyncPhase) [][]*Task {
	var waves [][]*Task
	for _, t := range p.Phases[phase] {
		if n := len(waves); n == 0 || waves[n-1][0].Wave != t.Wave {
			waves = append(waves, nil)
		}
		waves[len(waves)-1] = append(waves[len(waves)-1], t)
	}
	return waves
}

// PhaseOrder returns the phases a successful sync runs, in order.
func PhaseOrder() []v1alpha1.SyncPhase { return phaseOrder }

func less(a, b *Task) bool {
	if a.Wave != b.Wave {
		return a.Wave < b.Wave
	}
	ka, kb := kindRank(a.Obj.GetKind()), kindRank(b.Obj.GetKind())
	if ka != kb {
		return ka < kb
	}
	if a.Obj.GetKind() != b.Obj.GetKind() {
		return a.Obj.GetKind() < b.Obj.GetKind()
	}
	return a.Obj.GetName() < b.Obj.GetName()
}

func kindRank(kind string) int {
	if r, ok := kindOrder[kind]; ok {
		return r
	}
	return len(kindOrder)
}

func tasksFor(obj *unstructured.Unstructured) ([]*Task, error) {
	ann := obj.GetAnnotations()
	opts, err := ParseOptions(ann[v1alpha1.AnnotationSyncOptions])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kube.Ref(obj), err)
	}
	hookTypes, err := hookTypesOf(ann)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kube.Ref(obj), err)
	}
	wave, err := waveOf(ann, len(hookTypes) > 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kube.Ref(obj), err)
	}
	if hookTypes == nil {
		return []*Task{{Obj: obj, Phase: v1alpha1.SyncPhaseSync, Wave: wave, Options: opts}}, nil
	}
	policies := deletePolicies(ann)
	var tasks []*Task
	for _, h := range hookTypes {
		if h == v1alpha1.HookTypeSkip {
			continue
		}
		tasks = append(tasks, &Task{Obj: obj, Phase: v1alpha1.SyncPhase(h), Wave: wave, Hook: true, HookType: h, DeletePolicies: policies, Options: opts})
	}
	return tasks, nil
}

// hookTypesOf returns the hooks an object is, nil when it is a plain
// resource, and an empty list when it is a hook no sync runs.
func hookTypesOf(ann map[string]string) ([]v1alpha1.HookType, error) {
	if v, ok := ann[v1alpha1.AnnotationHook]; ok {
		var out []v1alpha1.HookType
		for _, h := range strings.Split(v, ",") {
			switch t := v1alpha1.HookType(strings.TrimSpace(h)); t {
			case v1alpha1.HookTypePreSync, v1alpha1.HookTypeSync, v1alpha1.HookTypePostSync, v1alpha1.HookTypeSyncFail, v1alpha1.HookTypeSkip:
				out = append(out, t)
			default:
				return nil, fmt.Errorf("%s %q: want PreSync, Sync, PostSync, SyncFail or Skip", v1alpha1.AnnotationHook, h)
			}
		}
		return out, nil
	}
	v, ok := ann[helmHook]
	if !ok {
		return nil, nil
	}
	out := []v1alpha1.HookType{}
	seen := map[v1alpha1.HookType]bool{}
	for _, h := range strings.Split(v, ",") {
		if t, ok := helmHookTypes[strings.TrimSpace(h)]; ok && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

func waveOf(ann map[string]string, hook bool) (int, error) {
	key := v1alpha1.AnnotationSyncWave
	v, ok := ann[key]
	if !ok && hook {
		key = helmHookWeight
		v, ok = ann[key]
	}
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a number", key, v)
	}
	return n, nil
}

func deletePolicies(ann map[string]string) []DeletePolicy {
	var out []DeletePolicy
	if v, ok := ann[v1alpha1.AnnotationHookDeletePolicy]; ok {
		for _, p := range strings.Split(v, ",") {
			out = append(out, DeletePolicy(strings.TrimSpace(p)))
		}
	} else if v, ok := ann[helmHookDeletePolicy]; ok {
		for _, p := range strings.Split(v, ",") {
			if dp, ok := helmDeletePolicies[strings.TrimSpace(p)]; ok {
				out = append(out, dp)
			}
		}
	}
	if len(out) == 0 {
		out = []DeletePolicy{BeforeHookCreation}
	}
	return out
}
