package cache

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a cache shared by several repo servers. Keys are prefixed so one
// Redis can serve other uses too.
type Redis struct {
	client   *redis.Client
	prefix   string
	compress Compression
}

// Compression is how values are stored in Redis, as Argo CD's
// redis.compression names it.
type Compression string

// The compressions a Redis cache takes.
const (
	// CompressionGZip stores values gzip-compressed: Argo CD's default.
	CompressionGZip Compression = "gzip"
	// CompressionNone stores values as they are.
	CompressionNone Compression = "none"
)

// ParseCompression reads a compression's name, or says which it takes.
func ParseCompression(name string) (Compression, error) {
	switch c := Compression(name); c {
	case CompressionGZip, CompressionNone:
		return c, nil
	}
	return "", fmt.Errorf("unknown Redis compression %q: want %s or %s", name, CompressionGZip, CompressionNone)
}

// maxValueBytes bounds a value once decompressed: a compressed value that
// unpacks to more is refused, not held. Four times the repo server's
// default bound on one render's manifests (64 MiB).
const maxValueBytes = 256 << 20

// RedisOptions say which Redis to use.
type RedisOptions struct {
	// Addr is the server's host:port. Required.
	Addr string
	// Password authenticates. Default: none.
	Password string
	// DB is the database number, as Argo CD's REDISDB. Default 0.
	DB int
	// SentinelAddrs are Redis Sentinels' host:port (Argo CD's --sentinel,
	// REDIS_SENTINEL_HOSTS): the server is the master they name, found
	// again after a failover, and Addr is not used. Default none.
	SentinelAddrs []string
	// SentinelMaster is the master's name at the Sentinels
	// (--sentinelmaster, REDIS_SENTINEL_MASTER). Default "master".
	SentinelMaster string
	// KeyPrefix goes before every key, so installs can share one Redis
	// (ARGOCD_REDIS_KEY_PREFIX). Default none.
	KeyPrefix string
	// Compression is how values are stored; values stored either way are
	// read back whatever it is now. Default CompressionNone;
	// `capstan repo-server` takes Argo CD's gzip.
	Compression Compression
	// Observe, if set, hears of each command sent, when it ends: its name
	// ("get", "set"), how long it took and its error (a missing key is
	// none). Argo CD's argocd_redis_request_* metrics. Default: none.
	Observe func(command string, took time.Duration, err error)
}

// observeHook tells RedisOptions.Observe of each command.
type observeHook struct {
	observe func(command string, took time.Duration, err error)
}

func (h observeHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h observeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		failed := err
		if errors.Is(err, redis.Nil) {
			failed = nil // a cache miss
		}
		h.observe(cmd.Name(), time.Since(start), failed)
		return err
	}
}

func (h observeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// NewRedis connects to the Redis server of opts and checks it answers.
func NewRedis(ctx context.Context, opts RedisOptions) (*Redis, error) {
	var c *redis.Client
	where := opts.Addr
	if len(opts.SentinelAddrs) > 0 {
		master := cmp.Or(opts.SentinelMaster, "master")
		c = redis.NewFailoverClient(&redis.FailoverOptions{MasterName: master, SentinelAddrs: opts.SentinelAddrs,
			Password: opts.Password, DB: opts.DB})
		where = fmt.Sprintf("master %q of sentinels %s", master, strings.Join(opts.SentinelAddrs, ","))
	} else {
		c = redis.NewClient(&redis.Options{Addr: opts.Addr, Password: opts.Password, DB: opts.DB})
	}
	if opts.Observe != nil {
		c.AddHook(observeHook{opts.Observe})
	}
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis %s: %w", where, err)
	}
	return &Redis{client: c, prefix: opts.KeyPrefix + "capstan|", compress: opts.Compression}, nil
}

// Get implements Cache.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := r.client.Get(ctx, r.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if v, err = decompress(v); err != nil {
		return nil, false, fmt.Errorf("cache entry %s: %w", key, err)
	}
	return v, true, nil
}

// Set implements Cache.
func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if r.compress == CompressionGZip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(value); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		value = buf.Bytes()
	}
	return r.client.Set(ctx, r.prefix+key, value, ttl).Err()
}

// decompress returns v unpacked if gzip compressed it (its first bytes say
// so: a value stored as it is is JSON, which never starts so), else as it is.
func decompress(v []byte) ([]byte, error) {
	if len(v) < 2 || v[0] != 0x1f || v[1] != 0x8b {
		return v, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(v))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxValueBytes+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxValueBytes {
		return nil, fmt.Errorf("unpacks to more than %d bytes", maxValueBytes)
	}
	return out, nil
}

// Close closes the connection pool.
func (r *Redis) Close() error { return r.client.Close() }

// Keys counts the keys this cache holds, for tests and diagnostics.
func (r *Redis) Keys(ctx context.Context) (int, error) {
	keys, err := r.client.Keys(ctx, r.prefix+"*").Result()
	return len(keys), err
}
