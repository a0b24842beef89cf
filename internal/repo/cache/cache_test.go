package cache

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/testing/redisserver"
)

func TestMemoryExpiryAndBound(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(2)
	_ = m.Set(ctx, "a", []byte("1"), time.Hour)
	_ = m.Set(ctx, "short", []byte("2"), time.Millisecond)
	time.Sleep(5 * time.Millisecond) // past the short entry's lifetime
	if v, ok, _ := m.Get(ctx, "a"); !ok || string(v) != "1" {
		t.Errorf("a = %q, %v", v, ok)
	}
	if _, ok, _ := m.Get(ctx, "short"); ok {
		t.Error("expired entry returned")
	}
	for i := range 5 {
		_ = m.Set(ctx, fmt.Sprint(i), nil, time.Hour)
	}
	if m.entries.Len() > 2 {
		t.Errorf("cache holds %d entries, bound is 2", m.entries.Len())
	}
	if hits, misses := m.Stats(); hits != 1 || misses != 1 {
		t.Errorf("hits, misses = %d, %d", hits, misses)
	}
}

func TestRedis(t *testing.T) {
	ctx := context.Background()
	r, err := NewRedis(ctx, RedisOptions{Addr: redisserver.Start(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok, err := r.Get(ctx, "missing"); ok || err != nil {
		t.Errorf("missing key: %v, %v", ok, err)
	}
	if err := r.Set(ctx, "k", []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := r.Set(ctx, "short", []byte("x"), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := r.Get(ctx, "k"); !ok || err != nil || string(v) != "v" {
		t.Errorf("k = %q, %v, %v", v, ok, err)
	}
	time.Sleep(150 * time.Millisecond) // past the short key's lifetime
	if _, ok, _ := r.Get(ctx, "short"); ok {
		t.Error("expired key returned")
	}
	if _, err := NewRedis(ctx, RedisOptions{Addr: "127.0.0.1:1"}); err == nil {
		t.Error("connecting to a closed port succeeded")
	}
}

// TestRedisThroughSentinel: with Sentinels the cache reaches the master
// they name (Argo CD's --sentinel and --sentinelmaster), and a key prefix
// keeps two installs' keys apart in one Redis.
func TestRedisThroughSentinel(t *testing.T) {
	ctx := context.Background()
	master := redisserver.Start(t)
	sentinel := redisserver.StartSentinel(t, master, "argocd")
	a, err := NewRedis(ctx, RedisOptions{SentinelAddrs: []string{sentinel}, SentinelMaster: "argocd", KeyPrefix: "a|"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := NewRedis(ctx, RedisOptions{Addr: master, KeyPrefix: "b|"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Set(ctx, "k", []byte("from a"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := b.Get(ctx, "k"); ok {
		t.Error("another prefix sees the key")
	}
	same, err := NewRedis(ctx, RedisOptions{Addr: master, KeyPrefix: "a|"})
	if err != nil {
		t.Fatal(err)
	}
	defer same.Close()
	if v, ok, err := same.Get(ctx, "k"); !ok || err != nil || string(v) != "from a" {
		t.Errorf("the master itself holds %q, %v, %v: the sentinel's client wrote elsewhere", v, ok, err)
	}
	if _, err := NewRedis(ctx, RedisOptions{SentinelAddrs: []string{sentinel}, SentinelMaster: "unknown"}); err == nil ||
		!strings.Contains(err.Error(), `master "unknown" of sentinels`) {
		t.Errorf("a master the sentinel does not know: %v", err)
	}
}

// TestRedisObserve: every command sent to a real Redis reaches
// RedisOptions.Observe by name; a missing key is no failure, a command
// to a stopped server is one.
func TestRedisObserve(t *testing.T) {
	ctx := context.Background()
	var seen []string
	r, err := NewRedis(ctx, RedisOptions{Addr: redisserver.Start(t), Observe: func(command string, _ time.Duration, err error) {
		seen = append(seen, fmt.Sprintf("%s %t", command, err != nil))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.Get(ctx, "missing"); ok || err != nil {
		t.Fatalf("missing key: %v %v", ok, err)
	}
	if err := r.Set(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.Get(ctx, "k"); !ok || err != nil {
		t.Fatalf("k: %v %v", ok, err)
	}
	_ = r.Close()
	_, _, _ = r.Get(ctx, "k") // the pool is closed: a failure
	var cache []string        // the cache's own commands, without the connection's handshake
	for _, c := range seen {
		if strings.HasPrefix(c, "get ") || strings.HasPrefix(c, "set ") {
			cache = append(cache, c)
		}
	}
	if want := "get false,set false,get false,get true"; strings.Join(cache, ",") != want {
		t.Errorf("commands %q, want %q", strings.Join(seen, ","), want)
	}
}

// TestRedisCompression: with gzip (redis.compression's default) values
// are stored compressed and read back as they were; a value stored the
// other way is read too, so changing the setting keeps the cache.
func TestRedisCompression(t *testing.T) {
	ctx := context.Background()
	addr := redisserver.Start(t)
	zipped, err := NewRedis(ctx, RedisOptions{Addr: addr, Compression: CompressionGZip})
	if err != nil {
		t.Fatal(err)
	}
	defer zipped.Close()
	plain, err := NewRedis(ctx, RedisOptions{Addr: addr, Compression: CompressionNone})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	value := []byte(`{"response":{"objects":[` + strings.Repeat(`{"kind":"ConfigMap"},`, 1000) + `{}]}}`)
	if err := zipped.Set(ctx, "z", value, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := plain.Set(ctx, "p", value, time.Hour); err != nil {
		t.Fatal(err)
	}
	raw, err := zipped.client.Get(ctx, zipped.prefix+"z").Bytes()
	if err != nil || len(raw) >= len(value)/10 || raw[0] != 0x1f {
		t.Errorf("stored with gzip: %d bytes of %d, %v", len(raw), len(value), err)
	}
	if raw, _ := plain.client.Get(ctx, plain.prefix+"p").Bytes(); string(raw) != string(value) {
		t.Errorf("stored as it is: %.40q", raw)
	}
	for _, c := range []*Redis{zipped, plain} {
		for _, key := range []string{"z", "p"} {
			if v, ok, err := c.Get(ctx, key); !ok || err != nil || string(v) != string(value) {
				t.Errorf("%s read by the %q cache: %v %v, %d bytes", key, c.compress, ok, err, len(v))
			}
		}
	}
	if _, err := ParseCompression("lz4"); err == nil || !strings.Contains(err.Error(), "want gzip or none") {
		t.Errorf("an unknown compression: %v", err)
	}
}

// TestRedisDB: redis.db picks the database the cache keeps its values in;
// another database of the same server does not see them.
func TestRedisDB(t *testing.T) {
	ctx := context.Background()
	addr := redisserver.Start(t)
	third, err := NewRedis(ctx, RedisOptions{Addr: addr, DB: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	first, err := NewRedis(ctx, RedisOptions{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if err := third.Set(ctx, "k", []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := first.Get(ctx, "k"); ok || err != nil {
		t.Errorf("database 0 sees database 3's value: %v %v", ok, err)
	}
	if v, ok, err := third.Get(ctx, "k"); !ok || err != nil || string(v) != "v" {
		t.Errorf("database 3: %q %v %v", v, ok, err)
	}
}
