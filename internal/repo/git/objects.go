package git

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Bounds of the object reader: the largest tree or commit object read, and
// the bytes of tree objects kept parsed (the root tree of a monorepo of
// 10,000 applications is about 400 KB, and each of its applications'
// renders walks through it).
const (
	maxTreeObject   = 16 << 20
	cachedTreeBytes = 16 << 20
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

	trees *treeCache
	roots *lru.Cache[string, string] // commit → its root tree
}

func newObjectReader(binary, gitDir string) *objectReader {
	roots, _ := lru.New[string, string](256)
	return &objectReader{binary: binary, gitDir: gitDir, trees: newTreeCache(cachedTreeBytes), roots: roots}
}

// treeCache keeps parsed trees by id (never stale: an id is its content),
// the least recently used dropped beyond a total of their objects' sizes.
type treeCache struct {
	mu          sync.Mutex
	lru         *simplelru.LRU[string, *tree]
	size, limit int64
}

func newTreeCache(limit int64) *treeCache {
	c := &treeCache{limit: limit}
	c.lru, _ = simplelru.NewLRU(math.MaxInt32, func(_ string, t *tree) { c.size -= t.size })
	return c
}

func (c *treeCache) get(id string) (*tree, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(id)
}

func (c *treeCache) add(id string, t *tree) {
	if t.size > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru.Contains(id) {
		return
	}
	c.lru.Add(id, t)
	c.size += t.size
	for c.size > c.limit {
		c.lru.RemoveOldest()
	}
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
	if o.timer == nil {
		o.timer = time.AfterFunc(objectReaderTTL, o.idle)
	} else {
		o.timer.Reset(objectReaderTTL) // one timer, pushed back by each read
	}
	proc := o.proc
	interrupted := context.AfterFunc(ctx, proc.stop)
	obj, err := proc.request(name, contents, max)
	if !interrupted() {
		o.proc = nil
		return nil, ctx.Err()
	}
	if err != nil && !errors.Is(err, errObjectMissing) {
		proc.stop() // the stream is out of step (an object too large is left unread): start afresh
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

// request asks for one object's header, and with contents its bytes: one
// round trip. An object over max is left unread: the caller stops the
// process rather than drain it.
func (c *catFile) request(name string, contents bool, max int64) (*object, error) {
	if !contents {
		return c.header("info " + name)
	}
	obj, err := c.header("contents " + name)
	if err != nil {
		return nil, err
	}
	if obj.size > max {
		return nil, fmt.Errorf("%w: %s %s is %d bytes, more than %d", ErrTooLarge, obj.kind, obj.id, obj.size, max)
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
	if id, ok := o.roots.Get(sha); ok {
		return id, nil
	}
	obj, err := o.read(ctx, sha, true, maxTreeObject)
	if err != nil {
		return "", err
	}
	if obj.kind != "commit" {
		return "", fmt.Errorf("%s is a %s, not a commit", sha, obj.kind)
	}
	id, ok := strings.CutPrefix(string(obj.data[:min(len(obj.data), 100)]), "tree ")
	if end := strings.IndexByte(id, '\n'); ok && end > 0 && isHex(id[:end]) {
		o.roots.Add(sha, id[:end])
		return id[:end], nil
	}
	return "", fmt.Errorf("commit %s: no tree", sha)
}

// tree returns the parsed tree object id.
func (o *objectReader) tree(ctx context.Context, id string) (*tree, error) {
	if t, ok := o.trees.get(id); ok {
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
	o.trees.add(id, t)
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
