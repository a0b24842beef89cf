package notifications

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"
)

// AnnotationNotified holds what was sent: a JSON object from each
// notification's key to the Unix time it was sent, as Argo CD keeps it.
const AnnotationNotified = "notified.notifications.argoproj.io"

// maxState bounds the entries kept; the oldest go first.
const maxState = 100

// State is the notified annotation's value.
type State map[string]int64

// ParseState reads the annotation; a value that does not parse reads as
// empty (everything held notifies again, rather than never).
func ParseState(v string) State {
	s := State{}
	if v != "" {
		_ = json.Unmarshal([]byte(v), &s)
	}
	return s
}

// stateKey is Argo CD's key of one condition notifying one destination:
// [<oncePer>:]<trigger>:<condition key>:<service>:<recipient>, where a
// self-service namespace's settings qualify the trigger as
// <namespace>:<trigger>.
func stateKey(trigger string, r Result, d Destination) string {
	key := strings.Join([]string{trigger, r.Key, d.Service, d.Recipient}, ":")
	if r.OncePer != "" {
		key = r.OncePer + ":" + key
	}
	return key
}

// mark records that r notified d, or forgets it when notified is false so
// the condition notifies again when it next holds; a condition with a
// oncePer value is never forgotten (it notifies once per value). It
// tells whether the state changed.
func (s State) mark(trigger string, r Result, d Destination, notified bool, now time.Time) bool {
	key := stateKey(trigger, r, d)
	_, had := s[key]
	if !notified && r.OncePer != "" {
		return false
	}
	if notified == had {
		return false
	}
	if notified {
		s[key] = now.Unix()
	} else {
		delete(s, key)
	}
	return true
}

// truncate keeps the newest maxState entries.
func (s State) truncate() {
	if len(s) <= maxState {
		return
	}
	keys := slices.SortedFunc(maps.Keys(s), func(a, b string) int {
		if s[a] != s[b] {
			return int(s[b] - s[a])
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys[maxState:] {
		delete(s, k)
	}
}

// String is the annotation's value.
func (s State) String() string {
	data, _ := json.Marshal(map[string]int64(s))
	return string(data)
}
