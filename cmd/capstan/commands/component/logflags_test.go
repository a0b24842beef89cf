package component

import (
	"bytes"
	"strings"
	"testing"
)

// TestNewLogger: a component's --loglevel, --logformat and
// ARGOCD_LOG_FORMAT_TIMESTAMP shape its log lines.
func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(&buf, "warn", "text", "2006")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown", "app", "guestbook")
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, "level=WARN msg=shown app=guestbook") || !strings.HasPrefix(out, "time=20") || len(strings.Fields(out)[0]) != len("time=2026") {
		t.Errorf("text at warn with a year-only time: %q", out)
	}
	buf.Reset()
	log, _ = newLogger(&buf, "debug", "json", "")
	log.Debug("shown")
	if !strings.Contains(buf.String(), `"level":"DEBUG","msg":"shown"`) {
		t.Errorf("json at debug: %q", buf.String())
	}
	for _, bad := range [][2]string{{"loud", "json"}, {"info", "xml"}} {
		if _, err := newLogger(&buf, bad[0], bad[1], ""); err == nil {
			t.Errorf("level %q, format %q accepted", bad[0], bad[1])
		}
	}
}
