package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// refreshTimeout bounds how long a refresh waits for the controller.
const refreshTimeout = 2 * time.Minute

// refreshApp sets the app's refresh annotation (normal or hard) and waits
// until the controller has refreshed it (the annotation is gone), then
// returns the refreshed Application, or why the refresh could not be asked
// for or did not happen in time.
func (s *Server) refreshApp(r *http.Request, app *v1alpha1.Application, kind string) (*v1alpha1.Application, error) {
	if kind != "normal" && kind != "hard" {
		return nil, badRequest(fmt.Sprintf("refresh %q: use normal or hard", kind))
	}
	ctx, cancel := context.WithTimeout(r.Context(), refreshTimeout)
	defer cancel()
	// Watch first, so the controller's answer cannot be missed.
	changed, stop := s.watchApp(r.WithContext(ctx), app)
	defer stop()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{v1alpha1.AnnotationRefresh: kind}}})
	if err := s.opts.Client.Patch(ctx, app, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		return nil, withStatus(statusOf(err), fmt.Errorf("error refreshing the app: %w", err))
	}
	for {
		select {
		case <-ctx.Done():
			return nil, withStatus(http.StatusGatewayTimeout, errors.New("application refresh deadline exceeded"))
		case fresh := <-changed:
			if fresh == nil {
				return nil, notFound(fmt.Sprintf("application %s was deleted while refreshing", app.Name))
			}
			// The watch starts with the copy from before the patch.
			if _, pending := fresh.Annotations[v1alpha1.AnnotationRefresh]; !pending && newerThan(fresh, app) {
				return fresh, nil
			}
		}
	}
}

// newerThan reports whether a's resourceVersion is later than b's (they
// are etcd revisions; an unreadable one counts as newer).
func newerThan(a, b *v1alpha1.Application) bool {
	va, errA := strconv.ParseUint(a.ResourceVersion, 10, 64)
	vb, errB := strconv.ParseUint(b.ResourceVersion, 10, 64)
	return errA != nil || errB != nil || va > vb
}
