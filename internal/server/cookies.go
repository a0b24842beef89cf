package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// A browser keeps a cookie of at most about 4 KiB, and an ID token with
// many groups is longer. As Argo CD does, the session token is cut into
// chunks: argocd.token holds "<chunks>:<first chunk>" (or the whole token
// when one chunk does), and argocd.token-1, argocd.token-2, … the rest.

// maxCookieLength is the longest "name=value; attributes" a chunk takes,
// Argo CD's figure.
const maxCookieLength = 4093

// DefaultMaxCookieNumber is how many chunks a session token may take when
// Options.MaxCookieNumber is unset, Argo CD's default.
const DefaultMaxCookieNumber = 20

// sessionCookieAttributes are the attributes every session chunk carries,
// as http.Cookie writes them.
func sessionCookieAttributes(secure bool) string {
	attrs := "Path=/; HttpOnly; SameSite=Lax"
	if secure {
		attrs += "; Secure"
	}
	return attrs
}

// chunkLength is how much of a token one cookie carries.
func chunkLength(secure bool) int {
	return maxCookieLength - (len(tokenCookie) + 3) - (len(sessionCookieAttributes(secure)) + 2)
}

// sessionCookies cuts token into the cookies that carry it, or says why
// it takes more than maxNumber of them.
func sessionCookies(token string, secure bool, maxNumber int) ([]*http.Cookie, error) {
	size := chunkLength(secure)
	chunks := (len(token) + size - 1) / size
	if chunks > maxNumber {
		return nil, fmt.Errorf("the authentication token is %d characters long and requires %d cookies but the max number of cookies is %d. Contact your Argo CD administrator to increase the max number of cookies", len(token), chunks, maxNumber)
	}
	cookies := make([]*http.Cookie, 0, chunks)
	for i := 0; i < chunks; i++ {
		part := token[i*size : min((i+1)*size, len(token))]
		name := tokenCookie
		switch {
		case i > 0:
			name = tokenCookie + "-" + strconv.Itoa(i)
		case chunks > 1:
			part = strconv.Itoa(chunks) + ":" + part
		}
		cookies = append(cookies, &http.Cookie{Name: name, Value: part, Path: "/", HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
	}
	return cookies, nil
}

// setSession sets the cookies carrying token, or says why it cannot (a
// server fault, 500, as in Argo CD: its administrator sets the limit).
func (s *Server) setSession(w http.ResponseWriter, token string) error {
	cookies, err := sessionCookies(token, !s.opts.Insecure, s.maxCookieNumber())
	if err != nil {
		return fmt.Errorf("setting the session cookie: %w", err)
	}
	for _, c := range cookies {
		http.SetCookie(w, c)
	}
	return nil
}

// maxCookieNumber is Options.MaxCookieNumber with its default.
func (s *Server) maxCookieNumber() int {
	if s.opts.MaxCookieNumber > 0 {
		return s.opts.MaxCookieNumber
	}
	return DefaultMaxCookieNumber
}

// clearSession drops the session cookie and every chunk r carries.
func (s *Server) clearSession(w http.ResponseWriter, r *http.Request) {
	for _, c := range r.Cookies() {
		if c.Name != tokenCookie && !isChunkName(c.Name) {
			continue
		}
		http.SetCookie(w, &http.Cookie{Name: c.Name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: !s.opts.Insecure})
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: !s.opts.Insecure})
}

// isChunkName reports whether name is argocd.token-<n>.
func isChunkName(name string) bool {
	n, ok := strings.CutPrefix(name, tokenCookie+"-")
	if !ok {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil
}

// cookieToken is the session token r's cookies carry, put together from
// its chunks; empty when there is none or its chunks are not all there.
// It takes no more chunks than maxNumber, and reads the Cookie header once.
func cookieToken(r *http.Request, maxNumber int) string {
	jar := map[string]string{}
	for _, c := range r.Cookies() {
		if c.Name == tokenCookie || isChunkName(c.Name) {
			jar[c.Name] = c.Value
		}
	}
	first, ok := jar[tokenCookie]
	if !ok {
		return ""
	}
	count, rest, chunked := strings.Cut(first, ":")
	if !chunked {
		return first
	}
	chunks, err := strconv.Atoi(count)
	if err != nil || chunks < 1 || chunks > maxNumber {
		return ""
	}
	var b strings.Builder
	b.WriteString(rest)
	for i := 1; i < chunks; i++ {
		part, ok := jar[tokenCookie+"-"+strconv.Itoa(i)]
		if !ok {
			return ""
		}
		b.WriteString(part)
	}
	return b.String()
}

// requestToken is the token r presents: its Authorization header's bearer
// token, or else its session cookies' (see cookieAuthenticated).
func (s *Server) requestToken(r *http.Request) string {
	if token, ok := bearerToken(r); ok {
		return token
	}
	return cookieToken(r, s.maxCookieNumber())
}

// bearerToken is r's Authorization header's bearer token, if it has one.
func bearerToken(r *http.Request) (string, bool) {
	return strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
}
