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
	for i := range k.Images {
		if k.Images[i].Name == img.Name {
			k.Images[i] = img
			return
		}
	}
	k.Images = append(k.Images, img)
}

func setReplicas(k *types.Kustomization, r types.Replica) {
	for i := range k.Replicas {
		if k.Replicas[i].Name == r.Name {
			k.Replicas[i] = r
			return
		}
	}
	k.Replicas = append(k.Replicas, r)
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
