package safetext_test

import (
	"fmt"
	"strings"

	"github.com/capstan-cd/capstan/internal/safetext"
)

func ExampleTemplate_Execute() {
	t := safetext.Must(safetext.Parse("greeting", `{{ .name | upper }}{{ repeat 3 "!" }}`, nil))
	out, err := t.Execute(map[string]string{"name": "guestbook"}, 64, "the greeting")
	fmt.Println(out, err)

	long := safetext.Must(safetext.Parse("long", `{{ repeat 100 "x" }}`, nil))
	_, err = long.Execute(nil, 64, "the greeting")
	fmt.Println(err != nil && strings.Contains(err.Error(), "longer than 64 bytes"))

	// What a template builds counts, not only what it writes.
	doubling := safetext.Must(safetext.Parse("doubling", `{{ $x := "ab" }}{{ range until 40 }}{{ $x = print $x $x }}{{ end }}{{ len $x }}`, nil))
	_, err = doubling.Execute(nil, 64, "the greeting")
	fmt.Println(err != nil && strings.Contains(err.Error(), "builds too much"))

	_, hasEnv := safetext.Funcs()["env"]
	fmt.Println(hasEnv)
	// Output:
	// GUESTBOOK!!! <nil>
	// true
	// true
	// false
}
