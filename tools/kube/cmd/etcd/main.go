// Command etcd is the etcd server at the version the pinned Kubernetes
// release requires, built from its Go module so tests need no downloads.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
