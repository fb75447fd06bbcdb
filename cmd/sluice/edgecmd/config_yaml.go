package edgecmd

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Size is a byte count in the configuration: an integer, or a string with
// a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB).
type Size int64

// sizeUnits are the units a Size accepts, longest first for matching.
var sizeUnits = []struct {
	name string
	n    int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// ParseSize parses "4GiB", "64 MiB", "10KB" or "1024".
func ParseSize(s string) (Size, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(num, u.name) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.name)), u.n
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	switch {
	case err != nil || num == "" || num[0] == '+' || num[0] == '-':
		return 0, fmt.Errorf("invalid size %q: want bytes, or a number with KiB, MiB, GiB, TiB, KB, MB, GB or TB", s)
	case n > math.MaxInt64/mult:
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return Size(n * mult), nil
}

// String formats the size with the largest binary unit that divides it.
func (s Size) String() string {
	for i := 3; i >= 0 && s != 0; i-- { // sizeUnits[0:4] are KiB to TiB
		if u := sizeUnits[i]; int64(s)%u.n == 0 {
			return strconv.FormatInt(int64(s)/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// UnmarshalYAML accepts a non-negative integer or a size string.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &nodeError{n, errors.New("want a size such as 65536 or \"64KiB\"")}
	}
	if n.Tag == "!!int" {
		var v int64
		if err := n.Decode(&v); err != nil || v < 0 {
			return &nodeError{n, fmt.Errorf("invalid size %s", n.Value)}
		}
		*s = Size(v)
		return nil
	}
	v, err := ParseSize(n.Value)
	if err != nil {
		return &nodeError{n, err}
	}
	*s = v
	return nil
}

// MarshalYAML writes the size as String does.
func (s Size) MarshalYAML() (any, error) { return s.String(), nil }

// Duration is a non-negative duration in Go syntax ("10s", "6h", "1m30s").
type Duration time.Duration

// UnmarshalYAML accepts a duration string, or 0.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &nodeError{n, errors.New("want a duration such as \"10s\"")}
	}
	v, err := time.ParseDuration(n.Value)
	switch {
	case err != nil:
		return &nodeError{n, fmt.Errorf("invalid duration %q: want Go syntax such as \"500ms\", \"10s\" or \"6h\"", n.Value)}
	case v < 0:
		return &nodeError{n, fmt.Errorf("duration %q is negative", n.Value)}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration in Go syntax.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// nodeError is a decoding error at a YAML node; locate turns it into one
// naming the key path.
type nodeError struct {
	node *yaml.Node
	err  error
}

func (e *nodeError) Error() string { return fmt.Sprintf("line %d: %v", e.node.Line, e.err) }
func (e *nodeError) Unwrap() error { return e.err }

// lineMsg matches the messages of a *yaml.TypeError.
var (
	lineMsg    = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownKey = regexp.MustCompile(`^field (\S+) not found in type`)
)

// locate rewrites a decoding error to name the key path of the offending
// node, as "limits.queue_bytes (line 12): invalid size ...".
func locate(data []byte, err error) error {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil { // a syntax error says where
		if strings.Contains(err.Error(), "expected alphabetic or numeric") {
			return fmt.Errorf("%w (patterns starting with '*' must be quoted: \"*\")", err)
		}
		return err
	}
	var nodes []pathNode
	indexNodes(&root, "", &nodes)
	var ne *nodeError
	if errors.As(err, &ne) {
		for _, p := range nodes {
			if p.value.Line == ne.node.Line && p.value.Column == ne.node.Column {
				return fmt.Errorf("%s (line %d): %w", p.path, ne.node.Line, ne.err)
			}
		}
		return err
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		msgs[i] = locateMessage(m, nodes)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// locateMessage names the path of one "line N: ..." message.
func locateMessage(msg string, nodes []pathNode) string {
	m := lineMsg.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	line, _ := strconv.Atoi(m[1])
	if k := unknownKey.FindStringSubmatch(m[2]); k != nil {
		for _, p := range nodes {
			if p.key != nil && p.key.Line == line && p.key.Value == k[1] {
				return fmt.Sprintf("%s (line %d): unknown key %q", p.path, line, k[1])
			}
		}
		return fmt.Sprintf("line %d: unknown key %q", line, k[1])
	}
	for _, p := range nodes {
		if p.value.Line == line && p.value.Kind == yaml.ScalarNode {
			return fmt.Sprintf("%s (line %d): %s", p.path, line, m[2])
		}
	}
	return msg
}

// pathNode is a node of the document with its key path.
type pathNode struct {
	path       string
	key, value *yaml.Node // key is nil for sequence items
}

// indexNodes lists every node under n with its path, in document order.
func indexNodes(n *yaml.Node, path string, out *[]pathNode) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			indexNodes(c, path, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			*out = append(*out, pathNode{path: p, key: k, value: v})
			indexNodes(v, p, out)
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			*out = append(*out, pathNode{path: p, value: v})
			indexNodes(v, p, out)
		}
	}
}
