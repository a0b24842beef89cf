package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"
	"time"
)

// sideBySide measures the floor, `capstan run` and Argo CD on the same
// workload, one after the other on fresh clusters, and prints them side by
// side with their ratios.
func sideBySide(ctx context.Context, n int, timeout time.Duration, argocdBin string) error {
	floor, _, err := measureFloor(ctx, n)
	if err != nil {
		return err
	}
	fmt.Println("== capstan run")
	capstan, err := processRun{n: n, timeout: timeout}.measure(ctx)
	if err != nil {
		return err
	}
	fmt.Println("== Argo CD")
	argo, err := argocdRun{n: n, timeout: timeout, bin: argocdBin}.measure(ctx)
	if err != nil {
		return err
	}
	printSideBySide(os.Stdout, floor, capstan, argo)
	return nil
}

// printSideBySide writes the table of one side-by-side run.
func printSideBySide(out *os.File, floor time.Duration, capstan, argo *figures) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	ratio := func(d time.Duration) string {
		return fmt.Sprintf("%.1f s (%.2f× the floor)", d.Seconds(), d.Seconds()/floor.Seconds())
	}
	fmt.Fprintf(tw, "\n%d apps\tcreated → all Synced\ta commit → all Synced\tCPU s\tpeak RSS\trequests/app\n", capstan.apps)
	fmt.Fprintf(tw, "floor\t%.1f s\t–\t–\t–\t–\n", floor.Seconds())
	for _, r := range []struct {
		name string
		f    *figures
	}{{"capstan run", capstan}, {"Argo CD", argo}} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%d MiB\t%.2f / %.2f\n", r.name, ratio(r.f.initial), ratio(r.f.change),
			r.f.cpuSeconds, r.f.peakRSSMiB, perApp(r.f.initialRequests, r.f.apps), perApp(r.f.changeRequests, r.f.apps))
	}
	fmt.Fprintf(tw, "Argo CD ÷ capstan run\t%.1f×\t%.1f×\t%.1f×\t%.1f×\t%.1f× / %.1f×\n",
		argo.initial.Seconds()/capstan.initial.Seconds(), argo.change.Seconds()/capstan.change.Seconds(),
		argo.cpuSeconds/capstan.cpuSeconds, float64(argo.peakRSSMiB)/float64(capstan.peakRSSMiB),
		float64(argo.initialRequests)/float64(capstan.initialRequests), float64(argo.changeRequests)/float64(capstan.changeRequests))
	_ = tw.Flush()
}
