package cmdutil

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// NoEffectAnnotation marks an Argo CD flag that Capstan accepts but that
// changes nothing; its value says why.
const NoEffectAnnotation = "capstan-no-effect"

// NoEffect registers Argo CD flags (name to pflag type, with "/x" for a
// shorthand) that change nothing in Capstan, for why: given, they are
// accepted, so that Argo CD's scripts run unchanged, and NoteNoEffect says
// so on stderr.
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

// NoteNoEffect says on stderr why each given flag registered by NoEffect
// changes nothing.
func NoteNoEffect(cmd *cobra.Command) {
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if why, ok := f.Annotations[NoEffectAnnotation]; ok {
			fmt.Fprintf(cmd.ErrOrStderr(), "--%s has no effect: %s\n", f.Name, strings.Join(why, ""))
		}
	})
}
