package project

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func TestSyncUser(t *testing.T) {
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.AppProjectSpec{DestinationServiceAccounts: []v1alpha1.ApplicationDestinationServiceAccount{
		{Server: "https://prod.*", Namespace: "shop-*", DefaultServiceAccount: "ops:deployer"},
		{Server: "*", Namespace: "*", DefaultServiceAccount: "deployer"},
	}}}
	app := func(ns string) *v1alpha1.Application {
		return &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Destination: v1alpha1.ApplicationDestination{Namespace: ns}}}
	}
	tests := []struct {
		enabled      bool
		ns, server   string
		want, errHas string
	}{
		{false, "shop-1", "https://prod.example.com", "", ""},
		{true, "shop-1", "https://prod.example.com", "system:serviceaccount:ops:deployer", ""},
		{true, "shop-1", "https://dev.example.com", "system:serviceaccount:shop-1:deployer", ""},
		{true, "other", "https://prod.example.com", "system:serviceaccount:other:deployer", ""},
	}
	for _, tt := range tests {
		got, err := SyncUser(tt.enabled, true, app(tt.ns), proj, tt.server)
		if got != tt.want || err != nil {
			t.Errorf("%v %s %s: %q %v, want %q", tt.enabled, tt.ns, tt.server, got, err, tt.want)
		}
	}
	if _, err := SyncUser(true, true, app("x"), &v1alpha1.AppProject{}, "https://a"); err == nil {
		t.Error("no entries, enforced: no error")
	}
	if user, err := SyncUser(true, false, app("x"), &v1alpha1.AppProject{}, "https://a"); user != "" || err != nil {
		t.Errorf("no entries, not enforced: %q %v, want the controller's own rights", user, err)
	}
}
