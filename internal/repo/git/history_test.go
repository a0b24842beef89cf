package git

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/gpgkey"
)

// TestVerifyHistory: the walk checks every commit back to the most recent
// seal (signed by a key of the ring and carrying the trailer), the seal
// included; a seal that is unsigned or signed by a key outside the ring
// does not stop it; a history over the bound is refused.
func TestVerifyHistory(t *testing.T) {
	trusted, stranger := gpgkey.New(t, "trusted"), gpgkey.New(t, "stranger")
	ring, err := NewKeyring([]string{trusted.Armored()})
	if err != nil {
		t.Fatal(err)
	}
	remote := gitserver.NewLocalRepo(t)
	file := func(v string) map[string]string { return map[string]string{"f.txt": v} }
	remote.Commit(t, "old, unsigned", file("1"))
	seal := remote.CommitSigned(t, "seal\n\nArgocd-gpg-seal: history reviewed", file("2"), trusted.Sign)
	unsigned := remote.Commit(t, "unsigned", file("3"))
	signed := remote.CommitSigned(t, "signed", file("4"), trusted.Sign)
	fakeSeal := remote.Commit(t, "not a seal\n\nArgocd-gpg-seal: unsigned", file("5"))
	strangeSeal := remote.CommitSigned(t, "not a seal either\n\nargocd-gpg-seal: signed by a stranger", file("6"), stranger.Sign)
	head := remote.CommitSigned(t, "head", file("7"), trusted.Sign)
	r := NewStore(Options{Root: t.TempDir()}).Repo(remote.URL, Creds{})
	ctx := context.Background()

	checks, err := r.VerifyHistory(ctx, head, ring, 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var order []string
	for _, c := range checks {
		got[c.Revision], order = c.Result, append(order, c.Revision)
	}
	want := map[string]string{head: ResultSigned, strangeSeal: ResultUnknownKey, fakeSeal: ResultUnsigned, signed: ResultSigned, unsigned: ResultUnsigned, seal: ResultSigned}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checked %v, want %v", got, want)
	}
	if order[0] != head || order[len(order)-1] != seal {
		t.Errorf("order %v: want the head first and the seal last", order)
	}
	if checks[0].KeyID != trusted.ID() || checks[0].Author != "test <test@example.com>" {
		t.Errorf("head check %+v", checks[0])
	}
	if checks, err := r.VerifyHistory(ctx, seal, ring, 100); err != nil || len(checks) != 1 || checks[0].Revision != seal {
		t.Errorf("a seal's history: %+v, %v; want the seal alone", checks, err)
	}
	if _, err := r.VerifyHistory(ctx, head, ring, 3); !errors.Is(err, ErrHistoryTooLong) {
		t.Errorf("over the bound: %v", err)
	}
}
