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

// NoEffectAnnotation marks an Argo CD flag that Capstan accepts but that
// changes nothing; its value says why.
const NoEffectAnnotation = "capstan-no-effect"

// Unsupported registers Argo CD flags (name to pflag type, with "/x" for a
// shorthand) that Capstan accepts on the command line but refuses with a
// clear error when given, rather than ignoring them.
func Unsupported(cmd *cobra.Command, flags map[string]string) {
	addFlags(cmd, flags, "not supported by Capstan yet: using it is an error", UnsupportedAnnotation, "true")
}

// NoEffect registers Argo CD flags (as Unsupported takes them) that change
// nothing in Capstan, for why: given, they are accepted, so that Argo CD's
// scripts run unchanged, and CheckFlags says so on stderr.
func NoEffect(cmd *cobra.Command, flags map[string]string, why string) {
	addFlags(cmd, flags, "has no effect: "+why, NoEffectAnnotation, why)
}

func addFlags(cmd *cobra.Command, flags map[string]string, usage, annotation, value string) {
	fs := cmd.Flags()
	for name, typ := range flags {
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
		_ = fs.SetAnnotation(name, annotation, []string{value})
	}
}

// CheckFlags fails when a flag registered by Unsupported was given, and
// says on stderr why each given flag registered by NoEffect changes
// nothing.
func CheckFlags(cmd *cobra.Command) error {
	var given []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if _, ok := f.Annotations[UnsupportedAnnotation]; ok {
			given = append(given, "--"+f.Name)
		}
		if why, ok := f.Annotations[NoEffectAnnotation]; ok {
			fmt.Fprintf(cmd.ErrOrStderr(), "--%s has no effect: %s\n", f.Name, strings.Join(why, ""))
		}
	})
	if len(given) == 0 {
		return nil
	}
	slices.Sort(given)
	return fmt.Errorf("%s: not supported by Capstan yet", strings.Join(given, ", "))
}
