package settings

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RevokedSessionsConfigMap holds the session tokens logged out before they
// expire, so that every API server replica refuses them: each key is
// RevocationID of a token, its value the time (RFC 3339) the token
// expires, after which the entry is dropped.
const RevokedSessionsConfigMap = "capstan-revoked-sessions"

// MaxRevokedSessions bounds the entries the ConfigMap holds (about 100
// bytes each, far below a ConfigMap's 1 MiB). Past it, the entries
// closest to their expiry make room.
const MaxRevokedSessions = 5000

// RevocationID is the key a token is revoked under: the SHA-256 of the
// token, so local, SSO and project tokens are revoked alike and the
// ConfigMap holds nothing a caller could use.
func RevocationID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Revocations reads the ConfigMap's live entries: id → expiry.
func Revocations(cm *corev1.ConfigMap, now time.Time) map[string]time.Time {
	out := map[string]time.Time{}
	for id, v := range cm.Data {
		if until, err := time.Parse(time.RFC3339, v); err == nil && until.After(now) {
			out[id] = until
		}
	}
	return out
}

// RevokeSession records that the token with id is revoked until it
// expires, creating the ConfigMap if needed and dropping expired entries.
func RevokeSession(ctx context.Context, c client.Client, namespace, id string, until time.Time) error {
	ref := "ConfigMap/" + namespace + "/" + RevokedSessionsConfigMap
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: RevokedSessionsConfigMap}, cm)
		if apierrors.IsNotFound(err) {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: RevokedSessionsConfigMap, Namespace: namespace,
				Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}}}
			cm.Data = revokedData(nil, id, until, time.Now())
			return c.Create(ctx, cm)
		}
		if err != nil {
			return err
		}
		cm.Data = revokedData(cm, id, until, time.Now())
		return c.Update(ctx, cm)
	})
	if apierrors.IsAlreadyExists(err) { // created by another replica meanwhile
		return RevokeSession(ctx, c, namespace, id, until)
	}
	if err != nil {
		return fmt.Errorf("revoking a session in %s: %w", ref, err)
	}
	return nil
}

// revokedData is the ConfigMap's data with id added: live entries only,
// at most MaxRevokedSessions, the ones expiring last kept.
func revokedData(cm *corev1.ConfigMap, id string, until, now time.Time) map[string]string {
	live := map[string]time.Time{}
	if cm != nil {
		live = Revocations(cm, now)
	}
	live[id] = until
	ids := slices.SortedFunc(maps.Keys(live), func(a, b string) int { return live[b].Compare(live[a]) })
	data := map[string]string{}
	for _, k := range ids[:min(len(ids), MaxRevokedSessions)] {
		data[k] = live[k].UTC().Format(time.RFC3339)
	}
	return data
}
