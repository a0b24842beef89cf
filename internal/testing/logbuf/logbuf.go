// Package logbuf is a log sink tests read while the code under test
// writes to it from other goroutines.
//
//	logs := &logbuf.Buffer{}
//	log := slog.New(slog.NewJSONHandler(logs, nil))
//	… strings.Contains(logs.String(), `"msg":"done"`)
package logbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for one writer and readers at once.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
