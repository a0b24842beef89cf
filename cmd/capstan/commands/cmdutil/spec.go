package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// SpecOutput are generate-spec's output flags: the format, and whether
// the result replaces the file it was read from.
type SpecOutput struct {
	Output string
	Inline bool
}

// Add puts the flags on cmd; withInline adds --inline.
func (o *SpecOutput) Add(cmd *cobra.Command, withInline bool) {
	cmd.Flags().StringVarP(&o.Output, "output", "o", "yaml", "output format: json or yaml")
	if withInline {
		cmd.Flags().BoolVarP(&o.Inline, "inline", "i", false, "write the result back to the --file it was read from")
	}
}

// Write prints obj with its apiVersion and kind, or writes it to file.
func (o *SpecOutput) Write(w io.Writer, obj any, gvk schema.GroupVersionKind, file string) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	doc["apiVersion"], doc["kind"] = gvk.GroupVersion().String(), gvk.Kind
	if meta, ok := doc["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	delete(doc, "status")
	var out []byte
	switch o.Output {
	case "json":
		out, err = json.MarshalIndent(doc, "", "  ")
		out = append(out, '\n')
	case "yaml":
		out, err = yaml.Marshal(doc)
	default:
		return fmt.Errorf("--output %q: use json or yaml", o.Output)
	}
	if err != nil {
		return err
	}
	if o.Inline {
		if file == "" {
			return fmt.Errorf("--inline writes back to --file: name one")
		}
		return os.WriteFile(file, out, 0o644)
	}
	_, err = w.Write(out)
	return err
}
