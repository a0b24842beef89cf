package plugin

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/capstan-cd/capstan/internal/repo/render/program"
)

// run runs c (a command of the plugin.yaml, not of any request) in dir
// with the sidecar's environment and env added, and returns what it
// printed without its last newline. The command and everything it started
// are killed when ctx ends.
func (s *sidecar) run(ctx context.Context, c Command, dir string, env []string) (string, error) {
	argv := append(slices.Clone(c.Command), c.Args...)
	start := time.Now()
	out, err := program.Run(ctx, program.Command{Argv: argv, Dir: dir, Env: env, MaxOutput: s.opts.MaxOutputBytes})
	s.opts.Log.Info("plugin command", "plugin", s.opts.Config.Metadata.Name, "command", argv[0], "dir", dir,
		"duration", time.Since(start).String(), "error", errString(err))
	return strings.TrimSuffix(string(out), "\n"), err
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
