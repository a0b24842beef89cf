package server

import (
	"encoding/base64"
	"errors"
	"iter"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
)

// listPage is a list request's paging: limit and continue, as a Kubernetes
// list takes them. Argo CD's API has no paging; a client that sends
// neither gets the whole list, as from Argo CD.
type listPage struct {
	// limit is the most items answered; 0 for all.
	limit int
	// after is the place of the last item of the previous page; the next
	// page starts after it in the list's order (by name, then namespace).
	after *kube.NameKey
}

func keyOf(app *v1alpha1.Application) kube.NameKey {
	return kube.NameKey{Name: app.Name, Namespace: app.Namespace}
}

// maxContinueToken bounds a continue token before it is decoded: a
// namespace and a name are 63 and 253 characters at most.
const maxContinueToken = 512

var errBadContinue = errors.New("invalid continue token")

// parsePage reads limit and continue from a list's query.
func parsePage(q url.Values) (listPage, error) {
	var p listPage
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return p, errors.New("invalid limit: want a number of items, 0 or more")
		}
		p.limit = n
	}
	if s := q.Get("continue"); s != "" {
		if len(s) > maxContinueToken {
			return p, errBadContinue
		}
		raw, err := base64.RawURLEncoding.DecodeString(s)
		ns, name, ok := strings.Cut(string(raw), "/")
		if err != nil || !ok || name == "" {
			return p, errBadContinue
		}
		p.after = &kube.NameKey{Name: name, Namespace: ns}
	}
	return p, nil
}

// continueToken is the token of the page that follows app.
func continueToken(app *v1alpha1.Application) string {
	return base64.RawURLEncoding.EncodeToString([]byte(app.Namespace + "/" + app.Name))
}

// take returns the items of apps (in list order, from after the previous
// page) that keep accepts, calling keep only until the page is full and a
// next item is known, and the token of the next page, "" when there is none.
func (p listPage) take(apps iter.Seq[*v1alpha1.Application], keep func(*v1alpha1.Application) bool) ([]*v1alpha1.Application, string) {
	var out []*v1alpha1.Application
	for app := range apps {
		if !keep(app) {
			continue
		}
		if p.limit > 0 && len(out) == p.limit {
			return out, continueToken(out[len(out)-1])
		}
		out = append(out, app)
	}
	return out, ""
}

// inOrder sorts apps in list order and yields those after the key after.
func inOrder(apps []*v1alpha1.Application, after *kube.NameKey) iter.Seq[*v1alpha1.Application] {
	slices.SortFunc(apps, func(a, b *v1alpha1.Application) int { return keyOf(a).Compare(keyOf(b)) })
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(apps, *after, func(app *v1alpha1.Application, k kube.NameKey) int { return keyOf(app).Compare(k) })
		if start < len(apps) && keyOf(apps[start]) == *after {
			start++
		}
	}
	return slices.Values(apps[start:])
}
