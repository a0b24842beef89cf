package applicationset

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Params is one parameter set a generator yields. With goTemplate the
// values nest (maps and lists, as in Argo CD's Go-template mode); without
// it they are flat, dotted keys with string values ("metadata.labels.env").
type Params map[string]any

// flatten returns p as dotted keys with string values (list items by
// index: "a.0.b"): the form the {{param}} renderer and generator
// selectors read.
func (p Params) flatten() map[string]string {
	out := map[string]string{}
	flattenInto(out, "", map[string]any(p))
	return out
}

func flattenInto(out map[string]string, prefix string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			flattenInto(out, join(prefix, k), sub)
		}
	case Params:
		flattenInto(out, prefix, map[string]any(v))
	case map[string]string:
		for k, sub := range v {
			out[join(prefix, k)] = sub
		}
	case []any:
		for i, sub := range v {
			flattenInto(out, join(prefix, strconv.Itoa(i)), sub)
		}
	case []string:
		for i, sub := range v {
			out[join(prefix, strconv.Itoa(i))] = sub
		}
	case nil:
		out[prefix] = ""
	case string:
		out[prefix] = v
	default:
		out[prefix] = fmt.Sprint(v)
	}
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// merged returns a copy of p with q's keys added. With flat parameters a
// key both sets hold with different values is an error, as in Argo CD's
// matrix generator; nested maps are merged, q's values winning.
func (p Params) merged(q Params, goTemplate bool) (Params, error) {
	out := Params{}
	for k, v := range p {
		out[k] = v
	}
	for k, v := range q {
		old, ok := out[k]
		switch {
		case !ok:
			out[k] = v
		case goTemplate:
			out[k] = deepMerge(old, v)
		case fmt.Sprint(old) != fmt.Sprint(v):
			return nil, fmt.Errorf("found duplicate key %s with different value, a: %v, b: %v", k, old, v)
		}
	}
	return out, nil
}

// deepMerge merges b into a where both are maps; otherwise b wins.
func deepMerge(a, b any) any {
	am, ok1 := a.(map[string]any)
	bm, ok2 := b.(map[string]any)
	if !ok1 || !ok2 {
		return b
	}
	out := make(map[string]any, len(am)+len(bm))
	for k, v := range am {
		out[k] = v
	}
	for k, v := range bm {
		if old, ok := out[k]; ok {
			out[k] = deepMerge(old, v)
		} else {
			out[k] = v
		}
	}
	return out
}

var notDNS = regexp.MustCompile(`[^-a-z0-9.]`)

// maxDNSName is the longest DNS subdomain name.
const maxDNSName = 253

// normalize makes s usable as a DNS subdomain name (an Application's
// name): lower case, every other character a hyphen, at most 253
// characters, starting and ending with a letter or digit. It is the
// `normalize` template function and the *Normalized parameters.
func normalize(s string) string {
	s = notDNS.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > maxDNSName {
		s = s[:maxDNSName]
	}
	return strings.Trim(s, "-.")
}

var notSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slugify makes s a slug of at most maxSize characters: lower case, runs
// of other characters one hyphen; with smartTruncate it is cut at a
// hyphen rather than inside a word. It is the `slugify` template function
// (defaults 50 and true).
func slugify(maxSize int, smartTruncate bool, s string) string {
	s = strings.Trim(notSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if maxSize <= 0 || len(s) <= maxSize {
		return s
	}
	cut := s[:maxSize]
	if smartTruncate && s[maxSize] != '-' {
		if i := strings.LastIndex(cut, "-"); i > 0 {
			cut = cut[:i]
		}
	}
	return strings.Trim(cut, "-")
}
