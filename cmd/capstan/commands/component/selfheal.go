package component

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/controller"
)

// selfHealFlags are Argo CD's self-heal backoff flags, in seconds as its.
type selfHealFlags struct {
	timeout, initial, factor, capSeconds int
}

func (f *selfHealFlags) add(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.timeout, "self-heal-timeout-seconds", 0, "seconds between two self-heal syncs of a revision, when the backoff is off (--self-heal-backoff-timeout-seconds 0)")
	cmd.Flags().IntVar(&f.initial, "self-heal-backoff-timeout-seconds", 2, "seconds before the second self-heal sync of a revision; each further one waits --self-heal-backoff-factor times longer (0: no backoff)")
	cmd.Flags().IntVar(&f.factor, "self-heal-backoff-factor", 3, "how much longer each further self-heal sync of a revision waits")
	cmd.Flags().IntVar(&f.capSeconds, "self-heal-backoff-cap-seconds", 300, "the longest wait between two self-heal syncs")
}

func (f *selfHealFlags) backoff() controller.SelfHealBackoff {
	return controller.SelfHealBackoff{
		Initial: time.Duration(f.initial) * time.Second, Factor: float64(f.factor),
		Cap: time.Duration(f.capSeconds) * time.Second, Fixed: time.Duration(f.timeout) * time.Second,
	}
}
