package safetext

import "unicode/utf8"

// Truncate shortens s to at most n bytes, cut at a character boundary,
// with "…" after a cut: what an error message quotes of a value a user
// gave, so a megabyte of input never becomes a megabyte of message.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
