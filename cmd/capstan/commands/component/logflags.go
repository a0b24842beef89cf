package component

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

// envLogTimestamp is the layout (Go's time format) of log lines' times for
// every component, as Argo CD's ARGOCD_LOG_FORMAT_TIMESTAMP; default: RFC
// 3339 with fractional seconds.
const envLogTimestamp = "ARGOCD_LOG_FORMAT_TIMESTAMP"

// logFlags are a component's logging settings: --loglevel and --logformat
// (set from the component's argocd-cmd-params-cm variables by bindEnv) and
// the time layout of envLogTimestamp.
type logFlags struct {
	level  string
	format string
}

func (f *logFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.level, "loglevel", "info", "log level: debug, info, warn or error")
	cmd.Flags().StringVar(&f.format, "logformat", "json", "log format: json or text")
	readsEnv(cmd, envLogTimestamp)
}

// logger is the component's logger, writing to standard error.
func (f *logFlags) logger() (*slog.Logger, error) {
	return newLogger(os.Stderr, f.level, f.format, os.Getenv(envLogTimestamp))
}

// newLogger returns a logger of level and format ("json" or "text") whose
// times follow layout (default: RFC 3339 with fractional seconds).
func newLogger(w io.Writer, level, format, layout string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--loglevel %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	if layout != "" {
		opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 && a.Value.Kind() == slog.KindTime {
				return slog.String(slog.TimeKey, a.Value.Time().Format(layout))
			}
			return a
		}
	}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--logformat %q: use json or text", format)
}
