package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/cluster"
	reposvc "github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/settings"
)

// TestStatusOf: every kind of error the handlers return maps to the status
// Argo CD answers it with, also when wrapped.
func TestStatusOf(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Group: "argoproj.io", Resource: "applications"}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{badRequest("no"), http.StatusBadRequest},
		{notFound("no"), http.StatusNotFound},
		{conflict("no"), http.StatusConflict},
		{withStatus(http.StatusForbidden, errors.New("no")), http.StatusForbidden},
		{appstate.NotFoundError{App: "guestbook"}, http.StatusNotFound},
		{apierrors.NewNotFound(gr, "guestbook"), http.StatusNotFound},
		{apierrors.NewAlreadyExists(gr, "guestbook"), http.StatusConflict},
		{apierrors.NewConflict(gr, "guestbook", errors.New("changed")), http.StatusConflict},
		{apierrors.NewBadRequest("no"), http.StatusBadRequest},
		{apierrors.NewForbidden(gr, "guestbook", errors.New("no")), http.StatusForbidden},
		{settings.ErrInvalidGPGKey, http.StatusBadRequest},
		{settings.ErrCertificateExists, http.StatusConflict},
		{settings.ErrGPGKeyNotFound, http.StatusNotFound},
		{cluster.ErrLastAppliedAnnotation, http.StatusBadRequest},
		{errors.New("the disk is full"), http.StatusInternalServerError},
	} {
		if got := statusOf(tc.err); got != tc.want {
			t.Errorf("statusOf(%v) = %d, want %d", tc.err, got, tc.want)
		}
		if got := statusOf(fmt.Errorf("reading Application/argocd/guestbook: %w", tc.err)); got != tc.want {
			t.Errorf("statusOf(wrapped %v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	// The repo server's refusals are the caller's: 400, or 404 for what
	// does not exist.
	if got := statusOf(fromRepo(git.ErrRevisionNotFound)); got != http.StatusNotFound {
		t.Errorf("a missing revision: %d", got)
	}
	if got := statusOf(fromRepo(errors.New("authentication required"))); got != http.StatusBadRequest {
		t.Errorf("a repository refusing: %d", got)
	}
	if fromRepo(nil) != nil || statusOf(fromRepo(reposvc.ErrNotFound)) != http.StatusNotFound {
		t.Error("fromRepo")
	}
}

// TestReplyShape: an error is answered in Argo CD's shape, with the gRPC
// code beside the message.
func TestReplyShape(t *testing.T) {
	t.Parallel()
	s := &Server{opts: Options{Log: slog.New(slog.DiscardHandler)}}
	w := httptest.NewRecorder()
	s.reply(w, nil, notFound("application guestbook not found"))
	if w.Code != http.StatusNotFound || w.Body.String() != `{"code":5,"error":"application guestbook not found","message":"application guestbook not found"}`+"\n" {
		t.Errorf("%d %s", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	s.reply(w, map[string]string{"value": "yes"}, nil)
	if w.Code != http.StatusOK || w.Body.String() != `{"value":"yes"}`+"\n" {
		t.Errorf("%d %s", w.Code, w.Body)
	}
}
