package controller

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// statusPatch is the merge patch from base to a status write's next
// Application. A status write changes only the annotations, the operation
// and the status (next is base with those replaced), so the patch is
// computed over those parts alone: the same patch as one over the whole
// objects, without encoding and comparing the spec and the rest of the
// metadata twice on every write.
type statusPatch struct {
	base *v1alpha1.Application
	// lock adds next's resourceVersion, so the write fails with a
	// conflict if the Application changed since base was read.
	lock bool
}

// writable is the part of an Application a status write may change.
type writable struct {
	Metadata struct {
		// Annotations without omitempty: an emptied map is {}, so a
		// removed key becomes null in the patch rather than the whole map.
		Annotations     map[string]string `json:"annotations"`
		ResourceVersion string            `json:"resourceVersion,omitempty"`
	} `json:"metadata"`
	Operation *v1alpha1.Operation        `json:"operation,omitempty"`
	Status    v1alpha1.ApplicationStatus `json:"status"`
}

func writableOf(app *v1alpha1.Application, version bool) *writable {
	w := &writable{Operation: app.Operation, Status: app.Status}
	w.Metadata.Annotations = app.Annotations
	if version {
		w.Metadata.ResourceVersion = app.ResourceVersion
	}
	return w
}

// Type is a JSON merge patch.
func (p statusPatch) Type() types.PatchType { return types.MergePatchType }

// Data is the patch turning base into obj, an *v1alpha1.Application made
// from base by statusWriter.next.
func (p statusPatch) Data(obj client.Object) ([]byte, error) {
	next, ok := obj.(*v1alpha1.Application)
	if !ok {
		return nil, fmt.Errorf("a status patch is for an Application, not %T", obj)
	}
	from, err := json.Marshal(writableOf(p.base, false))
	if err != nil {
		return nil, err
	}
	to, err := json.Marshal(writableOf(next, p.lock))
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(from, to)
}
