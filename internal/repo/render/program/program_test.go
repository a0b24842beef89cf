package program

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	for _, tt := range []struct {
		name string
		argv []string
		env  []string
		want string
		err  string
	}{
		{"output", []string{"sh", "-c", `printf '%s' "$GREETING"`}, []string{"GREETING=hello"}, "hello", ""},
		{"failure quotes stderr", []string{"sh", "-c", "echo broken >&2; exit 3"}, nil, "", "failed exit status 3: broken"},
		{"output over the bound", []string{"sh", "-c", "head -c 2000 /dev/zero"}, nil, "", "printed more than 1000 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Run(context.Background(), Command{Argv: tt.argv, Env: tt.env, MaxOutput: 1000})
			if string(out) != tt.want || (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("got %q, %v; want %q, %q", out, err, tt.want, tt.err)
			}
		})
	}
}

// TestRunKilledWithItsChildren: when the context ends, the program and
// what it started are killed; Run does not wait for the grandchild.
func TestRunKilledWithItsChildren(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Command{Argv: []string{"sh", "-c", "sleep 60 & sleep 60; wait"}, MaxOutput: 10})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a killed program reported success")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run still waits on the program 30 s after its context ended")
	}
}

func ExampleRun() {
	out, err := Run(context.Background(), Command{Argv: []string{"echo", "rendered"}, MaxOutput: 1 << 20})
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	// Output: rendered
}
