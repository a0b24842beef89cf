package git

import "testing"

func TestAuthor(t *testing.T) {
	for payload, want := range map[string]string{
		"tree abc\nauthor Jo Doe <jo@example.com> 1700000000 +0000\ncommitter X <x@y> 1 +0000\n\nmsg\n": "Jo Doe <jo@example.com>",
		"tree abc\n\nauthor Not A Header <n@x>\n":                                                       "",
	} {
		if got := Author([]byte(payload)); got != want {
			t.Errorf("Author(%q) = %q, want %q", payload, got, want)
		}
	}
}
