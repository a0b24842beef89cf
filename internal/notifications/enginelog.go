package notifications

import (
	"context"
	"io"
	"log/slog"
	"sync"

	"github.com/sirupsen/logrus"
)

// engineLogOnce routes the notifications-engine's logrus lines once per
// process.
var engineLogOnce sync.Once

// routeEngineLog sends the notifications-engine's lines (logrus) to log,
// as JSON lines shaped like Capstan's own, instead of logrus's text on
// standard error.
func routeEngineLog(log *slog.Logger) {
	engineLogOnce.Do(func() {
		logrus.SetOutput(io.Discard)
		logrus.SetLevel(logrus.InfoLevel)
		logrus.AddHook(slogHook{log: log.With("component", "notifications-engine")})
	})
}

// slogHook is a logrus hook writing each entry through slog.
type slogHook struct{ log *slog.Logger }

// Levels implements logrus.Hook.
func (slogHook) Levels() []logrus.Level { return logrus.AllLevels }

// Fire implements logrus.Hook.
func (h slogHook) Fire(e *logrus.Entry) error {
	level := slog.LevelInfo
	switch {
	case e.Level <= logrus.ErrorLevel:
		level = slog.LevelError
	case e.Level == logrus.WarnLevel:
		level = slog.LevelWarn
	case e.Level >= logrus.DebugLevel:
		level = slog.LevelDebug
	}
	attrs := make([]any, 0, 2*len(e.Data))
	for k, v := range e.Data {
		attrs = append(attrs, k, v)
	}
	h.log.Log(context.Background(), level, e.Message, attrs...)
	return nil
}
