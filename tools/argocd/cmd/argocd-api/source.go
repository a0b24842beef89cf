package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// fromSource are the gzipped schema files read by scanSource, by the name
// each registers under.
var fromSource = map[string][]byte{}

var (
	registerFile = regexp.MustCompile(`proto\.RegisterFile\("([^"]+)",\s*(fileDescriptor_[0-9a-f]+)\)`)
	byteLiteral  = regexp.MustCompile(`(?s)var (fileDescriptor_[0-9a-f]+) = \[\]byte\{(.*?)\n\}`)
	hexByte      = regexp.MustCompile(`0x[0-9a-f]{2}`)
)

// scanSource reads the schema files every generated Go file under root
// registers: `proto.RegisterFile("<name>", fileDescriptor_<id>)` and the
// byte literal of that variable.
func scanSource(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".pb.go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		literals := map[string][]byte{}
		for _, m := range byteLiteral.FindAllSubmatch(src, -1) {
			var gz []byte
			for _, h := range hexByte.FindAll(m[2], -1) {
				b, err := strconv.ParseUint(string(h[2:]), 16, 8)
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				gz = append(gz, byte(b))
			}
			literals[string(m[1])] = gz
		}
		for _, m := range registerFile.FindAllSubmatch(src, -1) {
			if gz, ok := literals[string(m[2])]; ok {
				out[string(m[1])] = gz
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no generated schema files under %s", root)
	}
	return out, nil
}
