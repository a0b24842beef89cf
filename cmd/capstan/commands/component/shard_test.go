package component

import "testing"

// TestShardOf: a controller replica's shard comes from --shard, then
// ARGOCD_CONTROLLER_SHARD, then the StatefulSet ordinal ending its host
// name, as Argo CD's controller finds it.
func TestShardOf(t *testing.T) {
	for _, tc := range []struct {
		name     string
		flag     int
		replicas int
		env      string
		want     int
		wantErr  bool
	}{
		{name: "one replica is shard 0", flag: -1, replicas: 1, want: 0},
		{name: "the flag wins", flag: 1, replicas: 2, env: "0", want: 1},
		{name: "the variable", flag: -1, replicas: 3, env: "2", want: 2},
		{name: "a variable that is no number", flag: -1, replicas: 2, env: "two", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ARGOCD_CONTROLLER_SHARD", tc.env)
			f := &controllerFlags{shard: tc.flag, replicas: tc.replicas}
			got, err := f.shardOf()
			if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
				t.Fatalf("shard %d, err %v; want %d, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
