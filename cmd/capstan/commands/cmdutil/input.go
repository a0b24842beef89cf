package cmdutil

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// MaxLocalFile bounds a local file an admin command reads.
const MaxLocalFile = 16 << 20

// ReadBounded reads a local file of at most MaxLocalFile bytes.
func ReadBounded(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxLocalFile {
		return nil, fmt.Errorf("%s is over %d bytes", path, MaxLocalFile)
	}
	return os.ReadFile(path)
}

// ReadObject reads a YAML or JSON file into obj, refusing unknown fields.
func ReadObject(file string, obj any) error {
	data, err := ReadBounded(file)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	return nil
}
