// Package manifest turns rendered text into Kubernetes objects and reads
// what the repo server reports about them, such as their container images.
package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// ErrNotManifest means a document is valid YAML or JSON but not a
// Kubernetes object (no apiVersion or kind).
var ErrNotManifest = errors.New("not a Kubernetes object")

// Parse reads one or more YAML documents (or a JSON document) and returns
// the objects in them, in order; List objects are expanded into their items
// and empty documents skipped. Errors name the file and the line in it.
func Parse(file string, data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	line := 1 // first line of the current document in the file
	for doc := 1; ; doc++ {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return objs, fmt.Errorf("%s: %w", file, err)
		}
		chunkStart := line
		// The reader drops the "---" line that ends each document.
		line += bytes.Count(chunk, []byte("\n")) + 1
		if isEmptyDocument(chunk) {
			continue
		}
		found, err := parseDocument(chunk)
		if err != nil {
			return objs, &Error{File: file, Line: chunkStart + leadingSeparatorLines(chunk), ChunkStart: chunkStart, Err: err}
		}
		objs = append(objs, found...)
	}
}

func parseDocument(doc []byte) ([]*unstructured.Unstructured, error) {
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	// apimachinery's JSON decoding keeps integers as int64, as unstructured
	// objects from the API server have them.
	var obj map[string]any
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, nil
	}
	u := &unstructured.Unstructured{Object: obj}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		return nil, fmt.Errorf("%w: apiVersion and kind are required", ErrNotManifest)
	}
	if !u.IsList() {
		return []*unstructured.Unstructured{u}, nil
	}
	list, err := u.ToList()
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

var lineRef = regexp.MustCompile(`line (\d+)`)

// Error is a document that could not be read, located in its file.
type Error struct {
	// File is the file as the caller named it.
	File string
	// Line is the first line of the document's content in the file.
	Line int
	// ChunkStart is the file line where the parser's line 1 is.
	ChunkStart int
	// Err is the parser's error.
	Err error
}

// Error names the file and the line: the parser's own line when it gave
// one, counted from the start of the file, else the document's first line.
func (e *Error) Error() string {
	msg := strings.TrimPrefix(e.Err.Error(), "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	if !lineRef.MatchString(msg) {
		return fmt.Sprintf("%s: document at line %d: %s", e.File, e.Line, msg)
	}
	return e.File + ": " + lineRef.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(m[len("line "):])
		return "line " + strconv.Itoa(e.ChunkStart+n-1)
	})
}

// Unwrap returns the parser's error.
func (e *Error) Unwrap() error { return e.Err }

// leadingSeparatorLines counts lines before a document's content that the
// YAML reader kept, such as the "---" separator.
func leadingSeparatorLines(chunk []byte) int {
	n := 0
	for _, l := range bytes.SplitAfter(chunk, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if len(t) == 0 || bytes.Equal(t, []byte("---")) || t[0] == '#' {
			n++
			continue
		}
		break
	}
	return n
}

func isEmptyDocument(chunk []byte) bool {
	for _, l := range bytes.Split(chunk, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if len(t) > 0 && !bytes.Equal(t, []byte("---")) && t[0] != '#' {
			return false
		}
	}
	return true
}

// LooksLikeManifest reports whether a file that failed to parse was meant to
// hold Kubernetes objects, the test Argo CD uses to decide between an error
// and silently skipping an unrelated YAML file.
func LooksLikeManifest(data []byte) bool {
	return bytes.Contains(data, []byte("apiVersion:")) && bytes.Contains(data, []byte("kind:")) && bytes.Contains(data, []byte("metadata:"))
}
