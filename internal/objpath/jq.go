package objpath

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/itchyny/gojq"
)

// JQTimeout bounds the evaluation of one jq path expression, as Argo CD's
// ignore.normalizer.jq.timeout does by default: an expression written to
// loop forever fails instead of holding a worker.
const JQTimeout = time.Second

// MaxPaths bounds the paths one expression may select: an expression
// that yields paths without end fails instead of filling memory.
const MaxPaths = 10000

// ErrSyntax is the error of an expression jq cannot parse.
var ErrSyntax = errors.New("not a jq path expression")

// ErrTimeout is the error of a jq expression not done within its time.
var ErrTimeout = errors.New("not done in time")

// JQ returns the paths the jq path expression expr selects in doc:
// path(expr), evaluated within timeout (JQTimeout when 0). A syntax error
// (ErrSyntax), an evaluation error, more than MaxPaths paths and running out
// of time (ErrTimeout) are errors.
func JQ(ctx context.Context, doc any, expr string, timeout time.Duration) ([]Path, error) {
	q, err := gojq.Parse("path(" + expr + ")")
	if err != nil {
		return nil, fmt.Errorf("jq path expression %q: %w: %w", expr, ErrSyntax, err)
	}
	if timeout <= 0 {
		timeout = JQTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out []Path
	iter := q.RunWithContext(ctx, doc)
	for {
		v, ok := iter.Next()
		if !ok {
			return out, nil
		}
		if err, isErr := v.(error); isErr {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("jq path expression %q: %w within %s", expr, ErrTimeout, timeout)
			}
			return nil, fmt.Errorf("jq path expression %q: %w", expr, err)
		}
		if p, ok := v.([]any); ok {
			if len(out) == MaxPaths {
				return nil, fmt.Errorf("jq path expression %q: more than %d paths", expr, MaxPaths)
			}
			out = append(out, p)
		}
	}
}
