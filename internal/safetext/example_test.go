package safetext_test

import (
	"fmt"
	"strings"
	"text/template"

	"github.com/capstan-cd/capstan/internal/safetext"
)

func ExampleExecute() {
	t := template.Must(template.New("greeting").Funcs(safetext.Funcs()).Parse(`{{ .name | upper }}{{ repeat 3 "!" }}`))
	out, err := safetext.Execute(t, map[string]string{"name": "guestbook"}, 64, "the greeting")
	fmt.Println(out, err)

	long := template.Must(template.New("long").Funcs(safetext.Funcs()).Parse(`{{ repeat 100 "x" }}`))
	_, err = safetext.Execute(long, nil, 64, "the greeting")
	fmt.Println(err != nil && strings.Contains(err.Error(), "longer than 64 bytes"))

	_, hasEnv := safetext.Funcs()["env"]
	fmt.Println(hasEnv)
	// Output:
	// GUESTBOOK!!! <nil>
	// true
	// false
}
