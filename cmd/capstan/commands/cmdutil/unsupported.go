package cmdutil

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// UnsupportedAnnotation marks a flag of Argo CD's whose feature Capstan
// does not have yet.
const UnsupportedAnnotation = "capstan-unsupported"

// Unsupported registers Argo CD flags (name to pflag type, with "/x" for a
// shorthand) that Capstan
// accepts on the command line but refuses with a clear error when given,
// rather than ignoring them.
func Unsupported(cmd *cobra.Command, flags map[string]string) {
	fs := cmd.Flags()
	for name, typ := range flags {
		usage := "not supported by Capstan yet: using it is an error"
		typ, short, _ := strings.Cut(typ, "/")
		switch typ {
		case "bool":
			fs.BoolP(name, short, false, usage)
		case "string":
			fs.StringP(name, short, "", usage)
		case "stringArray":
			fs.StringArrayP(name, short, nil, usage)
		case "stringSlice":
			fs.StringSliceP(name, short, nil, usage)
		case "int64Slice":
			fs.Int64SliceP(name, short, nil, usage)
		case "int64":
			fs.Int64P(name, short, 0, usage)
		case "int":
			fs.IntP(name, short, 0, usage)
		case "duration":
			fs.DurationP(name, short, 0, usage)
		default:
			panic("unsupported flag type " + typ)
		}
		_ = fs.SetAnnotation(name, UnsupportedAnnotation, []string{"true"})
	}
}

// RefuseUnsupported fails when a flag registered by unsupported was given.
func RefuseUnsupported(cmd *cobra.Command) error {
	var given []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if _, ok := f.Annotations[UnsupportedAnnotation]; ok {
			given = append(given, "--"+f.Name)
		}
	})
	if len(given) == 0 {
		return nil
	}
	slices.Sort(given)
	return fmt.Errorf("%s: not supported by Capstan yet", strings.Join(given, ", "))
}
