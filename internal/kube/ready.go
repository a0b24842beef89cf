package kube

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Backoff is how long Until waits between attempts: from Min, doubling,
// up to Max.
type Backoff struct {
	// Min is the first wait. Default 500ms.
	Min time.Duration
	// Max caps the wait. Default 10s: a component that waits for the API
	// server notices it is back within ten seconds.
	Max time.Duration
}

// Until calls fn until it succeeds or ctx ends, waiting b between
// attempts and logging each failure as what is being waited for. It
// returns ctx's error if ctx ends first.
func Until(ctx context.Context, log *slog.Logger, what string, b Backoff, fn func(context.Context) error) error {
	wait := b.Min
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	limit := b.Max
	if limit <= 0 {
		limit = 10 * time.Second
	}
	for {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		log.Warn("waiting for "+what, "error", err.Error(), "retry_in", wait.String())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, limit)
	}
}

// PrepareOptions say how WaitForCRDs prepares the cluster.
type PrepareOptions struct {
	// Install applies Capstan's CRDs (installing or upgrading them) before
	// waiting; when the API server refuses that (no permission on CRDs),
	// it waits for someone else to install them. Default false.
	Install bool
	// Namespace is where Applications and AppProjects are listed to check
	// they are served. Required.
	Namespace string
	// Log hears what is being waited for. Default: slog's default logger.
	Log *slog.Logger
}

// WaitForCRDs waits until the API server answers and serves Capstan's
// Applications and AppProjects in the control namespace, installing the
// CRDs first when asked to. It returns only when they are served, or with
// ctx's error.
func WaitForCRDs(ctx context.Context, cfg *rest.Config, opts PrepareOptions) error {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	install := opts.Install
	// Asking every two seconds at most costs an absent API server little
	// and notices its return soon.
	return Until(ctx, opts.Log, "the Kubernetes API server and Capstan's CRDs", Backoff{Max: 2 * time.Second}, func(ctx context.Context) error {
		if install {
			err := InstallCRDs(ctx, cfg)
			if apierrors.IsForbidden(err) {
				opts.Log.Warn("not allowed to install CRDs; waiting for them to be installed", "error", err.Error())
				install = false
			} else if err != nil {
				return err
			}
		}
		// A new client each time: its mapping of kinds to resources is
		// learnt afresh once the CRDs appear.
		c, err := NewClient(cfg)
		if err != nil {
			return err
		}
		return served(ctx, c, opts.Namespace)
	})
}

// served checks that Applications and AppProjects can be listed.
func served(ctx context.Context, c client.Client, namespace string) error {
	for _, list := range []client.ObjectList{&v1alpha1.ApplicationList{}, &v1alpha1.AppProjectList{}} {
		if err := c.List(ctx, list, client.InNamespace(namespace), client.Limit(1)); err != nil {
			return fmt.Errorf("listing %T in namespace %s: %w", list, namespace, err)
		}
	}
	return nil
}

// Keep runs a component (named by what, "the notifications controller")
// until ctx ends: run is started again, after a backoff of 1 s doubling to
// 30 s, whenever it fails or returns while ctx lasts (an API server
// outage, a leader Lease lost). It returns nil once ctx ends.
func Keep(ctx context.Context, log *slog.Logger, what string, run func(context.Context) error) error {
	err := Until(ctx, log, what+" to run", Backoff{Min: time.Second, Max: 30 * time.Second}, func(ctx context.Context) error {
		err := run(ctx)
		if err == nil && ctx.Err() == nil {
			err = fmt.Errorf("%s stopped", what)
		}
		return err
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}
