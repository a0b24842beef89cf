package main

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// apiServerProfile is -apiserver-cpuprofile: a file name prefix under which
// every site's API server CPU profile is written, in 10-second parts
// (merge them with go tool pprof), for finding what the API server spends
// its time on in one phase against another.
var apiServerProfile string

var sites atomic.Int32

// profileAPIServer fetches the API server's CPU profile, 10 seconds at a
// time, until ctx ends.
func profileAPIServer(ctx context.Context, cfg *rest.Config, prefix string) error {
	c, err := rest.RESTClientFor(withoutAPIGroup(cfg))
	if err != nil {
		return err
	}
	site := sites.Add(1)
	go func() {
		for part := 0; ctx.Err() == nil; part++ {
			data, err := c.Get().AbsPath("/debug/pprof/profile").Param("seconds", "10").DoRaw(ctx)
			if err != nil {
				if ctx.Err() == nil {
					fmt.Fprintln(os.Stderr, "API server profile:", err)
				}
				return
			}
			_ = os.WriteFile(fmt.Sprintf("%s.%d.%02d.pprof", prefix, site, part), data, 0o644)
		}
	}()
	return nil
}

// withoutAPIGroup is cfg for a client of the API server's own paths.
func withoutAPIGroup(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &schema.GroupVersion{}
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return c
}
