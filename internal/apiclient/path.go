package apiclient

import (
	"fmt"
	"net/url"
	"strings"
)

// Path is an API path with its query, as Do, DoRaw and Stream send it. A
// constant path is one as it is; any path with a value in it is built by
// PathOf, which escapes the value, so that a name holding a slash, a
// question mark or "%2F" reaches the route it names and no other.
type Path string

// PathOf fills the {placeholders} of pattern, written as the API server's
// routes are ("/api/v1/applications/{name}/sync"), with values in order,
// each escaped as one path segment; a last "{name...}" takes a value of
// several segments, escaping each and keeping its slashes. A count that
// does not match the pattern is a programming error, and panics.
func PathOf(pattern string, values ...string) Path {
	var b strings.Builder
	rest := pattern
	for _, v := range values {
		open := strings.IndexByte(rest, '{')
		end := strings.IndexByte(rest, '}')
		if open < 0 || end < open {
			panic(fmt.Sprintf("apiclient.PathOf(%q): more values than placeholders", pattern))
		}
		b.WriteString(rest[:open])
		if strings.HasSuffix(rest[:end], "...") {
			b.WriteString(escapeSegments(v))
		} else {
			b.WriteString(url.PathEscape(v))
		}
		rest = rest[end+1:]
	}
	if strings.ContainsRune(rest, '{') {
		panic(fmt.Sprintf("apiclient.PathOf(%q): a placeholder has no value", pattern))
	}
	b.WriteString(rest)
	return Path(b.String())
}

// escapeSegments escapes each of v's slash-separated segments.
func escapeSegments(v string) string {
	segments := strings.Split(v, "/")
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	return strings.Join(segments, "/")
}

// With adds the query q to the path, after any query it has already; an
// empty q leaves the path as it is.
func (p Path) With(q url.Values) Path {
	if len(q) == 0 {
		return p
	}
	sep := "?"
	if strings.ContainsRune(string(p), '?') {
		sep = "&"
	}
	return p + Path(sep+q.Encode())
}

// route is the path without its query, as errors name it.
func (p Path) route() string {
	route, _, _ := strings.Cut(string(p), "?")
	return route
}
