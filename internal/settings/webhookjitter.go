package settings

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// DefaultWebhookJitterThreshold is how many Applications a webhook
// refreshes at once before the jitter applies, as Argo CD's default.
const DefaultWebhookJitterThreshold = 10

// RefreshJitter spreads the refreshes one webhook causes, so that a push
// to a repository a thousand Applications follow does not render them all
// in the same second: the first Threshold refresh at once, each later one
// after a random wait below Max.
type RefreshJitter struct {
	// Max is webhook.refresh.jitter. Default 0: no wait.
	Max time.Duration
	// Threshold is webhook.refresh.jitter.threshold. Default 10.
	Threshold int
}

// Delay is how long the nth (from 1) Application one webhook refreshes
// waits.
func (j RefreshJitter) Delay(n int) time.Duration {
	if j.Max <= 0 || n <= j.Threshold {
		return 0
	}
	return rand.N(j.Max)
}

// WebhookRefreshJitter is webhook.refresh.jitter ("60s") and
// webhook.refresh.jitter.threshold. A value that cannot be read is an
// error, and its default comes with it.
func (a *ArgoCD) WebhookRefreshJitter() (RefreshJitter, error) {
	j := RefreshJitter{Threshold: DefaultWebhookJitterThreshold}
	var errs []error
	if v := a.Data["webhook.refresh.jitter"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("argocd-cm webhook.refresh.jitter: %q is not a duration such as 60s", v))
		} else {
			j.Max = d
		}
	}
	if v := a.Data["webhook.refresh.jitter.threshold"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("argocd-cm webhook.refresh.jitter.threshold: %q is not a number of Applications (0 or more)", v))
		} else {
			j.Threshold = n
		}
	}
	if len(errs) > 0 {
		return j, errs[0]
	}
	return j, nil
}
