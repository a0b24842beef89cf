package hydrate

import (
	"encoding/json"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Reference is a commit the dry commit names as its origin, through
// Argocd-reference-commit-* trailers (a CI job's code commit, say).
type Reference struct {
	Commit *ReferenceCommit `json:"commit,omitempty"`
}

// ReferenceCommit is what the trailers say of the referenced commit.
type ReferenceCommit struct {
	Author  *Person `json:"author,omitempty"`
	SHA     string  `json:"sha,omitempty"`
	Subject string  `json:"subject,omitempty"`
	Body    string  `json:"body,omitempty"`
	RepoURL string  `json:"repoURL,omitempty"`
	Date    string  `json:"date,omitempty"`
}

// Person is a commit's author.
type Person struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// referencePrefix starts the trailers that describe a reference.
const referencePrefix = "argocd-reference-commit-"

var referenceSHA = regexp.MustCompile(`^[0-9a-fA-F]{5,40}$`)

// splitReferences takes the valid Argocd-reference-commit-* trailers out
// of a commit message body: the reference they describe (nil when none is
// valid) and the body without them. Invalid ones stay in the body; a
// trailer given twice keeps its last value.
func splitReferences(body string) (*ReferenceCommit, string) {
	ref := &ReferenceCommit{}
	found := false
	var kept []string
	for _, line := range strings.Split(body, "\n") {
		key, value, ok := strings.Cut(line, ":")
		name, isRef := strings.CutPrefix(strings.ToLower(strings.TrimSpace(key)), referencePrefix)
		if !ok || !isRef || !ref.set(name, strings.TrimSpace(value)) {
			kept = append(kept, line)
			continue
		}
		found = true
	}
	if !found {
		return nil, body
	}
	return ref, strings.TrimSpace(strings.Join(kept, "\n"))
}

// set sets one field from its trailer, reporting whether the value is
// valid.
func (r *ReferenceCommit) set(name, value string) bool {
	switch name {
	case "author":
		a, err := mail.ParseAddress(value)
		if err != nil {
			return false
		}
		r.Author = &Person{Name: a.Name, Email: a.Address}
	case "sha":
		if !referenceSHA.MatchString(value) {
			return false
		}
		r.SHA = value
	case "subject":
		r.Subject = value
	case "body":
		if err := json.Unmarshal([]byte(value), &r.Body); err != nil {
			return false
		}
	case "repourl":
		u, err := url.Parse(value)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return false
		}
		r.RepoURL = value
	case "date":
		if _, err := time.Parse(time.RFC3339, value); err != nil {
			return false
		}
		r.Date = value
	default:
		return false
	}
	return true
}
