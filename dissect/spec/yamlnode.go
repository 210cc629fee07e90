package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// The node readers of the loader: every error names the node's place.

type loader struct {
	file string
	s    *Spec
}

// kv is one key of a mapping.
type kv struct {
	key  string
	k, v *yaml.Node
}

func (l *loader) pos(n *yaml.Node) string { return fmt.Sprintf("%s:%d:%d", l.file, n.Line, n.Column) }

func (l *loader) errf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s: %s", l.pos(n), fmt.Sprintf(format, args...))
}

func (l *loader) resolve(n *yaml.Node) (*yaml.Node, error) {
	if n.Kind == yaml.AliasNode {
		return nil, l.errf(n, "aliases (*%s) are not read: write the value out", esc(n.Value))
	}
	return n, nil
}

// mapping returns the keys of a mapping node, in order; a key not in
// allowed is an error naming the keys allowed.
func (l *loader) mapping(n *yaml.Node, what string, allowed ...string) ([]kv, error) {
	n, err := l.resolve(n)
	if err != nil {
		return nil, err
	}
	if n.Kind != yaml.MappingNode {
		return nil, l.errf(n, "%s: want a mapping (key: value lines)", what)
	}
	out := make([]kv, 0, len(n.Content)/2)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, l.errf(k, "%s: a key must be a plain word", what)
		}
		if v, err = l.resolve(v); err != nil {
			return nil, err
		}
		if allowed != nil && !contains(allowed, k.Value) {
			return nil, l.errf(k, "%s: unknown key %q (known: %s)", what, clip(k.Value), strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return nil, l.errf(k, "%s: key %q given twice", what, clip(k.Value))
		}
		seen[k.Value] = true
		out = append(out, kv{k.Value, k, v})
	}
	return out, nil
}

// clip keeps error lines short; %q then escapes what a terminal must
// not see.
func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// esc is clip for %s: control characters and non-ASCII escaped, no
// quotes added.
func esc(s string) string { return ascii(clip(s)) }

// ascii escapes s for a terminal, whole.
func ascii(s string) string {
	q := strconv.QuoteToASCII(s)
	return q[1 : len(q)-1]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (l *loader) list(n *yaml.Node, what string) ([]*yaml.Node, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, l.errf(n, "%s: want a list", what)
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		c, err := l.resolve(c)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

func (l *loader) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", l.errf(n, "%s: want a word or text", what)
	}
	return n.Value, nil
}

func isInt(n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!str" && n.Style != 0 {
		return false
	}
	_, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil {
		_, err = strconv.ParseUint(n.Value, 0, 64)
	}
	return err == nil
}

// int reads an integer (decimal, 0x hex, 0o octal, 0b binary) within
// [lo, hi].
func (l *loader) int(n *yaml.Node, what string, lo, hi int64) (int64, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, l.errf(n, "%s: want a number", what)
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil {
		return 0, l.errf(n, "%s: %q is not a whole number from %d to %d", what, clip(n.Value), lo, hi)
	}
	if v < lo || v > hi {
		return 0, l.errf(n, "%s: %d: want %d to %d", what, v, lo, hi)
	}
	return v, nil
}

// uint reads an unsigned integer of up to 64 bits.
func (l *loader) uint(n *yaml.Node, what string) (uint64, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, l.errf(n, "%s: want a number", what)
	}
	v, err := strconv.ParseUint(n.Value, 0, 64)
	if err != nil {
		return 0, l.errf(n, "%s: %q is not a whole number from 0 to 2^64-1", what, clip(n.Value))
	}
	return v, nil
}

func (l *loader) float(n *yaml.Node, what string) (float64, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, l.errf(n, "%s: want a number", what)
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		if iv, ierr := strconv.ParseInt(n.Value, 0, 64); ierr == nil {
			return float64(iv), nil
		}
		return 0, l.errf(n, "%s: %q is not a finite number", what, clip(n.Value))
	}
	return v, nil
}

func (l *loader) bool(n *yaml.Node, what string) (bool, error) {
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, l.errf(n, "%s: want true or false", what)
}

// bytesOf reads bytes written as a list of numbers and texts
// ([0xa5, 0x5a], ["JFIF", 0]) or as one text.
func (l *loader) bytesOf(n *yaml.Node, what string) ([]byte, error) {
	if n.Kind == yaml.ScalarNode && !isInt(n) {
		return []byte(n.Value), nil
	}
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		var err error
		if items, err = l.list(n, what); err != nil {
			return nil, err
		}
	}
	var out []byte
	for _, it := range items {
		if it.Kind == yaml.ScalarNode && !isInt(it) {
			out = append(out, it.Value...)
			continue
		}
		v, err := l.int(it, what, 0, 255)
		if err != nil {
			return nil, err
		}
		out = append(out, byte(v))
	}
	if len(out) > 4096 {
		return nil, l.errf(n, "%s: %d bytes: at most 4096", what, len(out))
	}
	return out, nil
}
