// Command image builds Capstan's container image without a Docker daemon,
// as `make image` runs it: a Debian root file system made by Debian's own
// mmdebstrap (with git, ssh and CA certificates, the programs Capstan runs),
// the capstan binary on top with Argo CD's component names linked to it
// and the other programs it runs (Dex, for argocd-dex rundex),
// assembled with go-containerregistry into an OCI image that runs as a
// non-root user. It writes an OCI layout and a tarball `docker load` takes,
// and pushes the image when asked.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	var opts Options
	flag.StringVar(&opts.Binary, "binary", "", "the capstan binary to put in the image (linux, statically linked)")
	flag.StringVar(&opts.Out, "out", "bin/image", "directory for the OCI layout (oci/) and the tarball (capstan.tar)")
	flag.StringVar(&opts.Tag, "tag", "latest", "the image's tag")
	flag.StringVar(&opts.Push, "push", "", "also push the image to this reference (registry/repository:tag)")
	flag.Func("with", "another program Capstan runs (Dex), put beside it in /usr/local/bin (repeatable)", func(path string) error {
		opts.Programs = append(opts.Programs, path)
		return nil
	})
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := Build(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}
