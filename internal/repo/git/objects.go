package git

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Bounds of the object reader: the largest tree or commit object read, the
// largest tree kept parsed, and how many trees and commits are kept.
const (
	maxTreeObject   = 16 << 20
	maxCachedTree   = 256 << 10
	cachedTrees     = 64
	objectReaderTTL = time.Minute
)

// errObjectMissing means the clone does not hold the object asked for.
var errObjectMissing = errors.New("object missing")

// objectReader reads one clone's objects through a single long-running
// `git cat-file --batch-command`, so reading a file of a commit costs a
// round trip on a pipe instead of a process or a checkout. Only object ids
// it read itself or a validated commit SHA are ever written to git.
// Requests are served one at a time; the process ends after a minute
// unused and after any failure, and starts again on the next request.
type objectReader struct {
	binary, gitDir string

	mu    sync.Mutex
	proc  *catFile
	timer *time.Timer

	trees *lru.Cache[string, *tree] // by tree id: never stale
}

func newObjectReader(binary, gitDir string) *objectReader {
	trees, _ := lru.New[string, *tree](cachedTrees)
	return &objectReader{binary: binary, gitDir: gitDir, trees: trees}
}

// catFile is one running `git cat-file --batch-command`.
type catFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func (o *objectReader) start() (*catFile, error) {
	cmd := exec.Command(o.binary, "--git-dir", o.gitDir, "cat-file", "--batch-command")
	cmd.Env = append(os.Environ(), gitEnv...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &catFile{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}, nil
}

func (c *catFile) stop() {
	_ = c.in.Close()
	_ = c.cmd.Process.Kill()
	go func() { _ = c.cmd.Wait() }()
}

// object is one object as cat-file describes it.
type object struct {
	id   string
	kind string // blob, tree, commit, tag
	size int64
	data []byte // nil for an info request
}

// read returns the header of object name and, with contents, its bytes;
// an object larger than max fails without its bytes being read.
func (o *objectReader) read(ctx context.Context, name string, contents bool, max int64) (*object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc == nil {
		p, err := o.start()
		if err != nil {
			return nil, err
		}
		o.proc = p
	}
	if o.timer != nil {
		o.timer.Stop()
	}
	o.timer = time.AfterFunc(objectReaderTTL, o.idle)
	proc := o.proc
	interrupted := context.AfterFunc(ctx, proc.stop)
	obj, err := proc.request(name, contents, max)
	if !interrupted() {
		o.proc = nil
		return nil, ctx.Err()
	}
	if err != nil && !errors.Is(err, errObjectMissing) && !errors.Is(err, ErrTooLarge) {
		proc.stop() // the stream may be out of step: start afresh next time
		o.proc = nil
	}
	return obj, err
}

// idle ends the process once no request came for objectReaderTTL.
func (o *objectReader) idle() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc != nil {
		o.proc.stop()
		o.proc = nil
	}
}

// reset ends the process, so the next request sees objects fetched since.
func (o *objectReader) reset() { o.idle() }

func (c *catFile) request(name string, contents bool, max int64) (*object, error) {
	obj, err := c.header("info " + name)
	if err != nil || !contents {
		return obj, err
	}
	if obj.size > max {
		return obj, fmt.Errorf("%w: %s %s is %d bytes, more than %d", ErrTooLarge, obj.kind, obj.id, obj.size, max)
	}
	if obj, err = c.header("contents " + obj.id); err != nil {
		return nil, err
	}
	obj.data = make([]byte, obj.size+1) // the contents, then a newline
	if _, err := io.ReadFull(c.out, obj.data); err != nil {
		return nil, err
	}
	obj.data = obj.data[:obj.size]
	return obj, nil
}

// header sends one command and reads the line that answers it.
func (c *catFile) header(command string) (*object, error) {
	if _, err := io.WriteString(c.in, command+"\n"); err != nil {
		return nil, err
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return nil, err
	}
	fields := strings.Fields(line)
	if len(fields) == 2 && (fields[1] == "missing" || fields[1] == "ambiguous") {
		return nil, fmt.Errorf("%w: %s", errObjectMissing, fields[0])
	}
	if len(fields) != 3 {
		return nil, fmt.Errorf("git cat-file: unexpected answer %q", strings.TrimSpace(line))
	}
	size, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil || size < 0 {
		return nil, fmt.Errorf("git cat-file: unexpected size in %q", strings.TrimSpace(line))
	}
	return &object{id: fields[0], kind: fields[1], size: size}, nil
}

// commitTree returns the id of the root tree of commit sha.
func (o *objectReader) commitTree(ctx context.Context, sha string) (string, error) {
	obj, err := o.read(ctx, sha, true, maxTreeObject)
	if err != nil {
		return "", err
	}
	if obj.kind != "commit" {
		return "", fmt.Errorf("%s is a %s, not a commit", sha, obj.kind)
	}
	id, ok := strings.CutPrefix(string(obj.data[:min(len(obj.data), 100)]), "tree ")
	if end := strings.IndexByte(id, '\n'); ok && end > 0 && isHex(id[:end]) {
		return id[:end], nil
	}
	return "", fmt.Errorf("commit %s: no tree", sha)
}

// tree returns the parsed tree object id.
func (o *objectReader) tree(ctx context.Context, id string) (*tree, error) {
	if t, ok := o.trees.Get(id); ok {
		return t, nil
	}
	obj, err := o.read(ctx, id, true, maxTreeObject)
	if err != nil {
		return nil, err
	}
	if obj.kind != "tree" {
		return nil, fmt.Errorf("%s is a %s, not a tree", id, obj.kind)
	}
	t, err := parseTree(obj.data, len(id)/2)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", id, err)
	}
	if obj.size <= maxCachedTree {
		o.trees.Add(id, t)
	}
	return t, nil
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}
