package kustomize

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// parseImage reads an image override in the forms `kustomize edit set
// image` accepts: name=newName[:tag|@digest], name:tag, name@digest.
func parseImage(s string) types.Image {
	name, replacement, renamed := strings.Cut(s, "=")
	if !renamed {
		replacement = s
	}
	img := types.Image{}
	ref, digest, hasDigest := strings.Cut(replacement, "@")
	if hasDigest {
		img.Digest = digest
	}
	base, tag := splitTag(ref)
	if !hasDigest {
		img.NewTag = tag
	}
	if renamed {
		img.Name = name
		img.NewName = base
	} else {
		img.Name = base
	}
	return img
}

// splitTag splits "host:5000/repo:tag" into "host:5000/repo" and "tag".
func splitTag(ref string) (string, string) {
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return ref, ""
	}
	return ref[:i], ref[i+1:]
}

// setImage replaces the entry for the same image name or appends one.
func setImage(k *types.Kustomization, img types.Image) {
	k.Images = upsert(k.Images, img, func(i types.Image) bool { return i.Name == img.Name })
}

// setReplicas replaces the entry for the same workload or appends one.
func setReplicas(k *types.Kustomization, r types.Replica) {
	k.Replicas = upsert(k.Replicas, r, func(x types.Replica) bool { return x.Name == r.Name })
}

// upsert replaces the first element that same matches with item, or
// appends item: what `kustomize edit set` does with named entries.
func upsert[T any](list []T, item T, same func(T) bool) []T {
	for i := range list {
		if same(list[i]) {
			list[i] = item
			return list
		}
	}
	return append(list, item)
}

func replicaCount(r v1alpha1.KustomizeReplica) (int64, error) {
	if r.Count.Type == intstr.Int {
		return int64(r.Count.IntVal), nil
	}
	n, err := strconv.ParseInt(r.Count.StrVal, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("replicas of %q: count %q is not a number", r.Name, r.Count.StrVal)
	}
	return n, nil
}

func resIDFor(id v1alpha1.KustomizeResID) resid.ResId {
	return resid.ResId{
		Gvk:       resid.Gvk{Group: id.Group, Version: id.Version, Kind: id.Kind},
		Name:      id.Name,
		Namespace: id.Namespace,
	}
}
