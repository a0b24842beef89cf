package writeback

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// A YAML file is edited by replacing the bytes of the scalars that change
// and nothing else, so its comments, order, quoting and indentation stay
// as they were. Only a value that does not exist yet makes the document
// be encoded anew.

// parseDocs reads every document of a YAML stream.
func parseDocs(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, &doc)
	}
}

// edit is one scalar to rewrite in place.
type edit struct {
	node  *yaml.Node
	value string
}

// applyEdits rewrites the scalars' bytes in data. It fails when a
// scalar's bytes are not where the parser says (a multi-line or unusual
// scalar), so the caller never writes a corrupted file.
func applyEdits(data []byte, edits []edit) ([]byte, error) {
	type span struct {
		start, end int
		text       string
	}
	lineStarts := []int{0}
	for i, b := range data {
		if b == '\n' {
			lineStarts = append(lineStarts, i+1)
		}
	}
	var spans []span
	for _, e := range edits {
		n := e.node
		if n.Line < 1 || n.Line > len(lineStarts) {
			return nil, fmt.Errorf("line %d is outside the file", n.Line)
		}
		start := lineStarts[n.Line-1]
		for col := 1; col < n.Column && start < len(data); col++ {
			_, size := utf8.DecodeRune(data[start:])
			start += size
		}
		end, err := scalarEnd(data, start, n)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		spans = append(spans, span{start, end, render(e.value, n.Style)})
	}
	var out bytes.Buffer
	pos := 0
	// Edits are made in file order; a scalar is never edited twice.
	for len(spans) > 0 {
		first := 0
		for i := range spans {
			if spans[i].start < spans[first].start {
				first = i
			}
		}
		s := spans[first]
		spans = append(spans[:first], spans[first+1:]...)
		if s.start < pos {
			return nil, errors.New("overlapping edits")
		}
		out.Write(data[pos:s.start])
		out.WriteString(s.text)
		pos = s.end
	}
	out.Write(data[pos:])
	return out.Bytes(), nil
}

// scalarEnd finds where the scalar starting at start ends.
func scalarEnd(data []byte, start int, n *yaml.Node) (int, error) {
	rest := data[start:]
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		if len(rest) == 0 || rest[0] != '"' {
			return 0, errors.New("expected a double-quoted value")
		}
		for i := 1; i < len(rest); i++ {
			switch rest[i] {
			case '\\':
				i++
			case '"':
				return start + i + 1, nil
			case '\n':
				return 0, errors.New("multi-line quoted values are not edited in place")
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		if len(rest) == 0 || rest[0] != '\'' {
			return 0, errors.New("expected a single-quoted value")
		}
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				return start + i + 1, nil
			}
			if rest[i] == '\n' {
				break
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0:
		// An empty value (key: with nothing after it) has no text to
		// replace; the caller encodes the document instead.
		if n.Value != "" && bytes.HasPrefix(rest, []byte(n.Value)) && !strings.Contains(n.Value, "\n") {
			return start + len(n.Value), nil
		}
	}
	return 0, errors.New("the value's text is not a single-line scalar")
}

// render writes value in the style the old value had; a plain value that
// YAML would read as something other than this string (1.10 as a number,
// true as a bool) is double-quoted.
func render(value string, style yaml.Style) string {
	switch {
	case style&yaml.SingleQuotedStyle != 0:
		return "'" + strings.ReplaceAll(value, "'", "''") + "'"
	case style&yaml.DoubleQuotedStyle == 0 && plainSafe(value):
		return value
	}
	out, _ := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Style: yaml.DoubleQuotedStyle})
	return strings.TrimSpace(string(out))
}

func plainSafe(value string) bool {
	out, err := yaml.Marshal(value)
	return err == nil && strings.TrimSpace(string(out)) == value
}

// lookup walks a dotted path of mapping keys from a node.
func lookup(n *yaml.Node, path []string) *yaml.Node {
	for _, key := range path {
		if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
			n = n.Content[0]
		}
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// setPath sets a dotted path's scalar in a document tree, creating the
// mappings on the way.
func setPath(doc *yaml.Node, path []string, value string) error {
	n := doc
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			n.Content = []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}
		}
		n = n.Content[0]
	}
	for i, key := range path {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a mapping", strings.Join(path[:i], "."))
		}
		var next *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == key {
				next = n.Content[j+1]
			}
		}
		last := i == len(path)-1
		if next == nil {
			next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if last {
				next = &yaml.Node{Kind: yaml.ScalarNode}
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, next)
		}
		if last {
			if next.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s is not a single value", strings.Join(path, "."))
			}
			next.Tag, next.Value, next.Style = "!!str", value, 0
		}
		n = next
	}
	return nil
}

// encode writes a document tree with two-space indentation.
func encode(doc *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// SetValues sets dotted paths (such as image.tag) in a YAML file holding
// one mapping, the way Helm values are written.
func SetValues(data []byte, values [][2]string) ([]byte, error) {
	docs, err := parseDocs(data)
	if err != nil {
		return nil, err
	}
	if len(docs) > 1 {
		return nil, errors.New("the file holds several YAML documents; a values file has one")
	}
	var edits []edit
	var missing [][2]string
	for _, kv := range values {
		if len(docs) == 0 {
			missing = append(missing, kv)
			continue
		}
		n := lookup(docs[0], strings.Split(kv[0], "."))
		switch {
		case n == nil:
			missing = append(missing, kv)
		case n.Kind != yaml.ScalarNode:
			return nil, fmt.Errorf("%s is not a single value", kv[0])
		case n.Value != kv[1]:
			edits = append(edits, edit{n, kv[1]})
		}
	}
	if len(missing) == 0 {
		if out, err := applyEdits(data, edits); err == nil && holdsValues(out, values) {
			return out, nil
		}
	}
	// A new key (or a value that cannot be rewritten in place): encode the
	// document again, comments kept, layout normalised.
	doc := &yaml.Node{Kind: yaml.DocumentNode}
	if len(docs) == 1 {
		doc = docs[0]
	}
	for _, kv := range values {
		if err := setPath(doc, strings.Split(kv[0], "."), kv[1]); err != nil {
			return nil, err
		}
	}
	return encode(doc)
}

// holdsValues reports whether a values file parses and holds the values:
// the check that an in-place edit did what it meant to.
func holdsValues(data []byte, values [][2]string) bool {
	docs, err := parseDocs(data)
	if err != nil || len(docs) != 1 {
		return false
	}
	for _, kv := range values {
		if n := lookup(docs[0], strings.Split(kv[0], ".")); n == nil || n.Kind != yaml.ScalarNode || n.Value != kv[1] {
			return false
		}
	}
	return true
}

// SetManifestImages rewrites the image fields (image: name:tag) of the
// manifests in a YAML file that name c's image, and reports whether any
// did.
func SetManifestImages(data []byte, c Change) ([]byte, bool, error) {
	docs, err := parseDocs(data)
	if err != nil {
		return nil, false, err
	}
	var edits []edit
	found := false
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Value == "image" && v.Kind == yaml.ScalarNode {
					if name, _, _ := SplitRef(v.Value); sameImage(name, c.Name) {
						found = true
						// The manifest keeps its own spelling of the name.
						ref := c
						ref.Name = name
						if v.Value != ref.Ref() {
							edits = append(edits, edit{v, ref.Ref()})
						}
					}
				}
			}
		}
		for _, child := range n.Content {
			walk(child)
		}
	}
	for _, d := range docs {
		walk(d)
	}
	if len(edits) == 0 {
		return data, found, nil
	}
	out, err := applyEdits(data, edits)
	if err == nil {
		if _, perr := parseDocs(out); perr != nil {
			err = fmt.Errorf("the edited file does not parse: %w", perr)
		}
	}
	return out, found, err
}

// sameImage reports whether two image names (without tag) name the same
// image, as Docker reads them: nginx, library/nginx and
// docker.io/library/nginx are one.
func sameImage(a, b string) bool {
	return a == b || dockerName(a) == dockerName(b)
}

func dockerName(n string) string {
	first, _, hasSlash := strings.Cut(n, "/")
	if hasSlash && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return n
	}
	if !hasSlash {
		n = "library/" + n
	}
	return "docker.io/" + n
}

// SetKustomizationImage sets c's entry in a kustomization's images list
// (name, newName, newTag, digest), adding the entry when there is none.
func SetKustomizationImage(data []byte, c Change) ([]byte, error) {
	docs, err := parseDocs(data)
	if err != nil {
		return nil, err
	}
	if len(docs) != 1 {
		return nil, errors.New("a kustomization holds one YAML document")
	}
	key := c.Name
	if c.Image.KustomizeImageName != "" {
		key = c.Image.KustomizeImageName
	}
	want := map[string]string{"newTag": c.NewTag}
	if c.Digest != "" {
		want = map[string]string{"digest": c.Digest}
	}
	if key != c.Name {
		want["newName"] = c.Name
	}
	if images := lookup(docs[0], []string{"images"}); images != nil && images.Kind == yaml.SequenceNode {
		for _, entry := range images.Content {
			if name := lookup(entry, []string{"name"}); name == nil || name.Value != key {
				continue
			}
			var edits []edit
			complete := true
			for field, value := range want {
				n := lookup(entry, []string{field})
				if n == nil || n.Kind != yaml.ScalarNode {
					complete = false
					break
				}
				if n.Value != value {
					edits = append(edits, edit{n, value})
				}
			}
			if complete {
				if out, err := applyEdits(data, edits); err == nil {
					if _, perr := parseDocs(out); perr == nil {
						return out, nil
					}
				}
			}
			for field, value := range want {
				if err := setPath(entry, []string{field}, value); err != nil {
					return nil, err
				}
			}
			return encode(docs[0])
		}
	}
	root := docs[0].Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, errors.New("the kustomization is not a mapping")
	}
	images := lookup(docs[0], []string{"images"})
	if images == nil {
		images = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "images"}, images)
	} else if images.Kind != yaml.SequenceNode {
		return nil, errors.New("images is not a list")
	}
	entry := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if err := setPath(entry, []string{"name"}, key); err != nil {
		return nil, err
	}
	for _, field := range []string{"newName", "newTag", "digest"} {
		if v, ok := want[field]; ok {
			if err := setPath(entry, []string{field}, v); err != nil {
				return nil, err
			}
		}
	}
	images.Content = append(images.Content, entry)
	return encode(docs[0])
}
