package spec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/framing"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// MaxFileSize bounds a protocol file.
const MaxFileSize = 1 << 20

// The keys of a protocol file, per section: the loader accepts these and
// no others, and the JSON Schema of the file (docs/protocol-file.schema.json)
// is tested to list the same.
var (
	topKeys      = []string{"meta", "doc", "frame", "seq", "messages", "types", "enums"}
	metaKeys     = []string{"id", "title", "endian", "bit-endian", "transports", "ports", "license", "xref", "ks-version"}
	frameKeys    = []string{"sync", "size", "length", "max", "check", "body", "confirm"}
	lengthKeys   = []string{"at", "type", "adjust"}
	checkKeys    = []string{"crc", "sum", "from", "to", "at", "endian"}
	crcKeys      = []string{"width", "poly", "init", "refin", "refout", "xorout"}
	bodyKeys     = []string{"from", "to"}
	messagesKeys = []string{"switch-on", "cases", "default"}
	typeKeys     = []string{"doc", "seq", "exchange", "answers", "heartbeat"}
	fieldKeys    = []string{"id", "type", "size", "size-eos", "contents", "encoding", "terminator", "pad-right",
		"repeat", "repeat-expr", "repeat-until", "enum", "valid", "doc", "unit", "role", "scale", "offset", "fixed-point"}
	switchKeys = []string{"switch-on", "cases"}
	validKeys  = []string{"min", "max", "eq", "any-of"}
)

// LoadFile reads and compiles a protocol file.
func LoadFile(path string) (*Protocol, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("protocol file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("protocol file %s: %w", path, err)
	}
	s, err := Load(path, data)
	if err != nil {
		return nil, err
	}
	return New(s)
}

// LoadDir compiles every *.yaml and *.yml file of dir, in name order. A
// directory that does not exist holds none.
func LoadDir(dir string) ([]*Protocol, error) {
	var names []string
	for _, pat := range []string{"*.yaml", "*.yml"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		names = append(names, m...)
	}
	var out []*Protocol
	for _, name := range names {
		p, err := LoadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// UserDir is the directory of a user's own protocol files:
// $XDG_CONFIG_HOME/dissect/protocols, else ~/.config/dissect/protocols
// (os.UserConfigDir's rule); "" when neither is known.
func UserDir() string {
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "dissect", "protocols")
}

// Load reads a protocol file's description; file names it in errors
// ("FILE:LINE:COL: what is wrong"). The description is not compiled: see
// [New].
func Load(file string, data []byte) (*Spec, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, MaxFileSize)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s", yamlError(file, err))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s:1:1: empty protocol file", file)
	}
	l := &loader{file: file, s: &Spec{At: map[string]string{"": file + ":1:1"}}}
	if err := l.top(doc.Content[0]); err != nil {
		return nil, err
	}
	return l.s, nil
}

// yamlError puts the YAML library's message in the FILE:LINE:COL form,
// at the place the library found the problem.
func yamlError(file string, err error) string {
	var le *yaml.LoadError
	if errors.As(err, &le) && le.Mark.Line > 0 {
		// the library's words, which quote no more than a character
		msg := ascii(le.Message)
		if c := le.ContextMark; le.ContextMsg != "" && c.Line > 0 && (c.Line != le.Mark.Line || c.Column != le.Mark.Column) {
			msg += fmt.Sprintf(" (%s from %d:%d)", ascii(le.ContextMsg), c.Line, max(c.Column, 1))
		}
		return fmt.Sprintf("%s:%d:%d: not YAML: %s", file, le.Mark.Line, max(le.Mark.Column, 1), msg)
	}
	return fmt.Sprintf("%s:1:1: not YAML: %s", file, esc(strings.TrimPrefix(err.Error(), "yaml: ")))
}

func (l *loader) top(n *yaml.Node) error {
	keys, err := l.mapping(n, "protocol file", topKeys...)
	if err != nil {
		return err
	}
	s := l.s
	var seq, meta *kv
	for i := range keys {
		switch keys[i].key {
		case "meta":
			meta = &keys[i]
		case "seq":
			seq = &keys[i]
		}
	}
	if meta == nil {
		return l.errf(n, "no meta (meta: {id: NAME, ...})")
	}
	if err := l.meta(meta.v); err != nil {
		return err
	}
	if seq == nil {
		return l.errf(n, "no seq: the fields every frame starts with")
	}
	for _, e := range keys {
		s.At[e.key] = l.pos(e.k)
		switch e.key {
		case "doc":
			if _, err := l.str(e.v, "doc"); err != nil {
				return err
			}
		case "frame":
			err = l.frame(e.v)
		case "seq":
			var fs []layout.Field
			fs, err = l.seq(e.v)
			s.Schema.Types = append(s.Schema.Types, layout.Type{Name: FrameType, Seq: fs, At: l.pos(e.k)})
		case "messages":
			err = l.messages(e.v)
		case "types":
			err = l.types(e.v)
		case "enums":
			err = l.enums(e.v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) meta(n *yaml.Node) error {
	keys, err := l.mapping(n, "meta", metaKeys...)
	if err != nil {
		return err
	}
	s := l.s
	for _, e := range keys {
		s.At["meta."+e.key] = l.pos(e.v)
		switch e.key {
		case "id":
			s.Name, err = l.str(e.v, "meta.id")
		case "title":
			s.Title, err = l.str(e.v, "meta.title")
		case "endian":
			s.Schema.Endian, err = l.order(e.v, "meta.endian")
		case "bit-endian":
			s.Schema.BitEndian, err = l.order(e.v, "meta.bit-endian")
		case "transports":
			var items []*yaml.Node
			if items, err = l.list(e.v, "meta.transports"); err != nil {
				return err
			}
			for _, it := range items {
				t, ok := dissect.ParseTransport(it.Value)
				if !ok || it.Kind != yaml.ScalarNode {
					return l.errf(it, "meta.transports: %q: want tcp, udp or serial", clip(it.Value))
				}
				s.Transports = append(s.Transports, t)
			}
		case "ports":
			var items []*yaml.Node
			if items, err = l.list(e.v, "meta.ports"); err != nil {
				return err
			}
			for _, it := range items {
				tr, port, ok := strings.Cut(it.Value, "/")
				t, tok := dissect.ParseTransport(tr)
				p, perr := strconv.ParseUint(port, 10, 16)
				if it.Kind != yaml.ScalarNode || !ok || !tok || t == dissect.Serial || perr != nil || p == 0 {
					return l.errf(it, "meta.ports: %q: want tcp/PORT or udp/PORT", clip(it.Value))
				}
				s.Ports = append(s.Ports, dissect.Port{Transport: t, Port: uint16(p)})
			}
		default: // license, xref, ks-version: Kaitai's, kept out of the way
		}
		if err != nil {
			return err
		}
	}
	if s.Name == "" {
		return l.errf(n, "meta: no id (the protocol's name, as -d takes it)")
	}
	if len(s.Transports) == 0 {
		s.Transports = []dissect.Transport{dissect.TCP, dissect.Serial}
	}
	for _, p := range s.Ports {
		if !contains(transportNames(s.Transports), p.Transport.String()) {
			return l.errf(n, "meta.ports: %s/%d is not over one of meta.transports", p.Transport, p.Port)
		}
	}
	return nil
}

func transportNames(ts []dissect.Transport) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.String()
	}
	return out
}

func (l *loader) order(n *yaml.Node, what string) (layout.Order, error) {
	switch n.Value {
	case "le":
		return layout.LittleEndian, nil
	case "be":
		return layout.BigEndian, nil
	}
	return 0, l.errf(n, "%s: want le or be", what)
}

// intType reads u1 … u8 with an optional le or be: a width and an order.
func (l *loader) intType(n *yaml.Node, what string) (int, layout.Order, error) {
	w := n.Value
	o := l.s.Schema.Endian
	switch {
	case strings.HasSuffix(w, "le"):
		o, w = layout.LittleEndian, strings.TrimSuffix(w, "le")
	case strings.HasSuffix(w, "be"):
		o, w = layout.BigEndian, strings.TrimSuffix(w, "be")
	}
	if len(w) != 2 || w[0] != 'u' || w[1] < '1' || w[1] > '8' {
		return 0, 0, l.errf(n, "%s: %q: want u1 … u8, optionally followed by le or be", what, clip(n.Value))
	}
	return int(w[1] - '0'), o, nil
}

func (l *loader) frame(n *yaml.Node) error {
	keys, err := l.mapping(n, "frame", frameKeys...)
	if err != nil {
		return err
	}
	f := &l.s.Framing
	var body *yaml.Node
	for _, e := range keys {
		l.s.At[e.key] = l.pos(e.v)
		var v int64
		switch e.key {
		case "sync":
			f.Sync, err = l.bytesOf(e.v, "frame.sync")
			if err == nil && len(f.Sync) == 0 {
				err = l.errf(e.v, "frame.sync: empty")
			}
		case "size":
			v, err = l.int(e.v, "frame.size", 1, 16<<20)
			f.Size = int(v)
		case "max":
			v, err = l.int(e.v, "frame.max", 1, 16<<20)
			f.Max = int(v)
		case "confirm":
			v, err = l.int(e.v, "frame.confirm", 1, 16)
			f.Confirm = int(v)
		case "length":
			err = l.length(e.v)
		case "check":
			err = l.check(e.v)
		case "body":
			body = e.v
		}
		if err != nil {
			return err
		}
	}
	// the body's defaults: after the sync word, before the check
	l.s.Body.From = len(f.Sync)
	if f.Check != nil && f.Check.At < 0 {
		l.s.Body.To = f.Check.At
	}
	if body != nil {
		keys, err := l.mapping(body, "frame.body", bodyKeys...)
		if err != nil {
			return err
		}
		for _, e := range keys {
			var v int64
			if e.key == "from" {
				v, err = l.int(e.v, "frame.body.from", 0, 1024)
				l.s.Body.From = int(v)
			} else {
				v, err = l.int(e.v, "frame.body.to", -1024, 0)
				l.s.Body.To = int(v)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *loader) length(n *yaml.Node) error {
	keys, err := l.mapping(n, "frame.length", lengthKeys...)
	if err != nil {
		return err
	}
	ln := &framing.Length{Width: 1}
	for _, e := range keys {
		l.s.At["length."+e.key] = l.pos(e.v)
		var v int64
		switch e.key {
		case "at":
			v, err = l.int(e.v, "frame.length.at", 0, 1024)
			ln.Offset = int(v)
		case "type":
			ln.Width, ln.Order, err = l.intType(e.v, "frame.length.type")
		case "adjust":
			ln.Adjust, err = l.int(e.v, "frame.length.adjust", -1<<20, 1<<20)
		}
		if err != nil {
			return err
		}
	}
	l.s.Framing.Length = ln
	return nil
}

func (l *loader) check(n *yaml.Node) error {
	keys, err := l.mapping(n, "frame.check", checkKeys...)
	if err != nil {
		return err
	}
	c := &framing.Check{Order: l.s.Schema.Endian}
	var from, to, at *int64
	for _, e := range keys {
		l.s.At["check."+e.key] = l.pos(e.v)
		var v int64
		switch e.key {
		case "crc":
			if c.Kind != 0 {
				return l.errf(e.k, "frame.check: crc and sum: give one")
			}
			c.Kind = framing.CRCCheck
			c.CRC, err = l.crc(e.v)
		case "sum":
			if c.Kind != 0 {
				return l.errf(e.k, "frame.check: crc and sum: give one")
			}
			k, ok := framing.ParseSum(e.v.Value)
			if !ok || e.v.Kind != yaml.ScalarNode {
				return l.errf(e.v, "frame.check.sum: %q: want one of %s", clip(e.v.Value), strings.Join(framing.SumNames(), ", "))
			}
			c.Kind = k
		case "from":
			v, err = l.int(e.v, "frame.check.from", 0, 1024)
			from = &v
		case "to":
			v, err = l.int(e.v, "frame.check.to", -1024, 0)
			to = &v
		case "at":
			v, err = l.int(e.v, "frame.check.at", -1024, 1024)
			at = &v
		case "endian":
			c.Order, err = l.order(e.v, "frame.check.endian")
		}
		if err != nil {
			return err
		}
	}
	if c.Kind == 0 {
		return l.errf(n, "frame.check: give crc (a catalogue name or its parameters) or sum")
	}
	// defaults: the check is the last bytes of the frame and covers what
	// lies between the sync word and it
	width := 1
	switch c.Kind {
	case framing.CRCCheck:
		width = (c.CRC.Width + 7) / 8
	case framing.Fletcher8, framing.Fletcher16:
		width = 2
	}
	c.From, c.To, c.At = len(l.s.Framing.Sync), -width, -width
	if from != nil {
		c.From = int(*from)
	}
	if to != nil {
		c.To = int(*to)
	}
	if at != nil {
		c.At = int(*at)
	}
	l.s.Framing.Check = c
	return nil
}

func (l *loader) crc(n *yaml.Node) (framing.CRC, error) {
	if n.Kind == yaml.ScalarNode {
		c, ok := framing.CRCPreset(n.Value)
		if !ok {
			return c, l.errf(n, "frame.check.crc: unknown CRC %q (known: %s; or give width, poly, init, refin, refout, xorout)", clip(n.Value), strings.Join(framing.CRCPresetNames(), ", "))
		}
		return c, nil
	}
	keys, err := l.mapping(n, "frame.check.crc", crcKeys...)
	if err != nil {
		return framing.CRC{}, err
	}
	var c framing.CRC
	for _, e := range keys {
		var v int64
		switch e.key {
		case "width":
			v, err = l.int(e.v, "frame.check.crc.width", 1, 64)
			c.Width = int(v)
		case "poly":
			c.Poly, err = l.uint(e.v, "frame.check.crc.poly")
		case "init":
			c.Init, err = l.uint(e.v, "frame.check.crc.init")
		case "xorout":
			c.XorOut, err = l.uint(e.v, "frame.check.crc.xorout")
		case "refin":
			c.RefIn, err = l.bool(e.v, "frame.check.crc.refin")
		case "refout":
			c.RefOut, err = l.bool(e.v, "frame.check.crc.refout")
		}
		if err != nil {
			return c, err
		}
	}
	if c.Width == 0 {
		return c, l.errf(n, "frame.check.crc: no width")
	}
	return c, nil
}
