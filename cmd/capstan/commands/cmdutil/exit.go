package cmdutil

import (
	"errors"
	"fmt"
)

// ExitError ends a command with a given exit code; err, if set, is printed.
type ExitError struct {
	Code int
	Err  error
}

func (e ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e ExitError) Unwrap() error { return e.Err }

// ExitCode is the process exit code for a command's error, and whether
// the error has a message to print.
func ExitCode(err error) (int, bool) {
	var e ExitError
	if errors.As(err, &e) {
		return e.Code, e.Err != nil
	}
	return 1, true
}
