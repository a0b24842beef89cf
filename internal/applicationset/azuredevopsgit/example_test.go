package azuredevopsgit_test

import (
	"fmt"

	"github.com/microsoft/azure-devops-go-api/azuredevops/v7"

	"github.com/capstan-cd/capstan/internal/applicationset/azuredevopsgit"
)

// TypeKey tells Azure DevOps' errors apart by their type key, whether the
// library returned the error as a value or as a pointer.
func ExampleTypeKey() {
	key := "GitRepositoryNotFoundException"
	fmt.Println(azuredevopsgit.TypeKey(azuredevops.WrappedError{TypeKey: &key}))
	var asPointer error = &azuredevops.WrappedError{TypeKey: &key}
	fmt.Println(azuredevopsgit.TypeKey(fmt.Errorf("listing branches: %w", asPointer)))
	fmt.Printf("%q\n", azuredevopsgit.TypeKey(fmt.Errorf("timeout")))
	// Output:
	// GitRepositoryNotFoundException
	// GitRepositoryNotFoundException
	// ""
}
