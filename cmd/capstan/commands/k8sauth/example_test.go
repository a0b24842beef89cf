package k8sauth_test

import (
	"fmt"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/k8sauth"
)

// A cluster Secret's awsAuthConfig runs capstan k8s-auth aws with the
// cluster's name; without one, there is no token to sign.
func ExampleNewCommand() {
	cmd := k8sauth.NewCommand()
	cmd.SetArgs([]string{"aws"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	fmt.Println(cmd.Execute())
	// Output: an EKS token needs the cluster's name
}
