package updater

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBoundedMessage(t *testing.T) {
	long := strings.Repeat("é", maxMessage)
	got := bounded(long)
	if len(got) > maxMessage+len("…") || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("bounded: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if bounded("short") != "short" {
		t.Error("a short message changed")
	}
}
