package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Argo CD's defaults for the work Git webhooks cause.
const (
	defaultWebhookParallelism    = 50
	defaultWebhookRefreshWorkers = 20
)

// webhookWork bounds the work Git webhooks cause, as Argo CD's
// server.webhook.parallelism.limit and server.webhook.refresh.workers do:
// how many webhooks are handled at once, and how many refresh annotations
// are written at once across them.
type webhookWork struct {
	requests  chan struct{}
	refreshes chan struct{}
	// ctx is the server's: a refresh waiting out its jitter ends with it.
	ctx context.Context
}

func newWebhookWork(ctx context.Context, parallelism, workers int) *webhookWork {
	if parallelism <= 0 {
		parallelism = defaultWebhookParallelism
	}
	if workers <= 0 {
		workers = defaultWebhookRefreshWorkers
	}
	return &webhookWork{requests: make(chan struct{}, parallelism), refreshes: make(chan struct{}, workers), ctx: ctx}
}

// enter waits for a turn to handle a webhook; the returned func ends it.
func (w *webhookWork) enter(ctx context.Context) (func(), error) {
	select {
	case w.requests <- struct{}{}:
		return func() { <-w.requests }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refresh writes the refresh annotation onto each Application: the first
// ones at once, at most the workers' number at a time, and returns when
// they are written; those beyond the jitter's threshold each after a
// random wait, in the background, reporting failures to failed.
func (w *webhookWork) refresh(ctx context.Context, c client.Client, apps []*v1alpha1.Application, jitter settings.RefreshJitter, failed func(error)) error {
	var wg sync.WaitGroup
	errs := make([]error, len(apps))
	for i, app := range apps {
		if d := jitter.Delay(i + 1); d > 0 {
			time.AfterFunc(d, func() {
				if err := w.write(w.ctx, c, app); err != nil && w.ctx.Err() == nil {
					failed(err)
				}
			})
			continue
		}
		wg.Go(func() { errs[i] = w.write(ctx, c, app) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// write patches one Application's refresh annotation in a worker's turn.
func (w *webhookWork) write(ctx context.Context, c client.Client, app *v1alpha1.Application) error {
	select {
	case w.refreshes <- struct{}{}:
		defer func() { <-w.refreshes }()
	case <-ctx.Done():
		return ctx.Err()
	}
	patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.AnnotationRefresh + `":"normal"}}}`)
	if err := c.Patch(ctx, app, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		return fmt.Errorf("refreshing Application/%s/%s: %w", app.Namespace, app.Name, err)
	}
	return nil
}
