// Package spec turns a protocol description into a [dissect.Protocol]: how
// frames are found and checked ([framing.Framing]), the fields every frame
// starts with, and the message types that follow, chosen by one of those
// fields (each a [layout.Type]). A description is a Go value ([Spec]);
// a protocol file is one serialisation of it, read by [Load] (YAML, with
// Kaitai Struct's words where they overlap: see docs/protocol-file.md).
//
// A described protocol is a protocol like the built-ins: it declares its
// record types (so every output form, the display filter and the schema
// follow), detects by content, resynchronises, and runs under the
// stream's budgets on TCP, UDP and serial links.
package spec

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/exchange"
	"github.com/dissect-tools/dissect/dissect/framing"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// Spec is a protocol description.
type Spec struct {
	Name       string // decode-as name and "proto" key: lower-case letters, digits, - and _
	Title      string // one line
	Transports []dissect.Transport
	Ports      []dissect.Port
	Framing    framing.Framing
	// Body is the part of a frame its fields are read from:
	// frame[Body.From : len(frame)+Body.To]. A frame whose size the
	// framing does not say is read from Body.From to where its fields end
	// (Body.To must then be 0).
	Body Range
	// Schema holds the types and enums. The type named "frame" is read
	// from every frame's body first; its fields are recorded in every
	// record.
	Schema layout.Schema
	// Messages chooses the message type that follows the frame's fields,
	// by one of them; nil: the frame type is the whole message, recorded
	// as type "message".
	Messages *layout.Switch
	// Meta is what the record types mean to consumers, by type name.
	Meta map[string]TypeMeta
	// At says where settings were described ("file:line:col"), by the
	// key of a framing error ("length.type", ...), for error messages.
	At map[string]string
	// Limits bound the compiled layout (zero: layout.DefaultLimits).
	Limits layout.Limits
}

// Range is a part of a frame.
type Range struct{ From, To int }

// TypeMeta is what a message type means: a request or a reply (-z rtt),
// a heartbeat.
type TypeMeta struct {
	Exchange  dissect.Exchange
	Heartbeat bool
}

// LatencyField is the field a reply gets: the time since its request. A
// reply type that says which request type it answers
// (TypeMeta.Exchange.Answers) is matched to the oldest unanswered request
// of that type from the other direction with the same request key (the
// field of role request_key, when both have one).
const LatencyField = "rtt_ms"

// maxInflight bounds the requests a direction keeps per type: the oldest
// is forgotten past it.
const maxInflight = 64

// FrameType is the name of the type read from every frame first.
const FrameType = "frame"

// MessageType is the record type of a protocol without Messages.
const MessageType = "message"

// Protocol is a described protocol.
type Protocol struct {
	s      *Spec
	fr     *framing.Framer
	plan   *layout.Plan
	frame  int           // the frame type
	on     int           // the frame type's field slot Messages switches on
	cases  map[int64]int // message types by value
	def    int           // the default message type, -1: none
	decls  []dissect.TypeDecl
	detect string
	ex     *exchange.Plan // requests and replies (maxInflight)
	// dense indexes the cases from value lo on (-1: none), without the
	// map, when they lie within maxDense of one another
	dense []int16
	lo    int64
	meta  []TypeMeta // by layout type
	max   int        // the largest frame (framing's Max)
	// fixed: the frame's fields and, by layout type, each message's, when
	// they are numbers at fixed offsets (layout.Fixed): such a message is
	// framed and decoded without the general decoder (parser.fast)
	fixed    []fixedType
	frameFix bool     // some messages take the fast path, fp
	fp       fastPath // with frameFix
}

// New compiles a description. Its errors name where the description says
// what is wrong (the At of the setting, when known).
func New(s *Spec) (*Protocol, error) {
	if !validProtoName(s.Name) {
		return nil, fmt.Errorf("%sprotocol id %q: want lower-case letters, digits, - and _, starting with a letter (at most 40)", at(s, "meta.id"), s.Name)
	}
	fr, err := framing.New(s.Framing)
	if err != nil {
		var fe *framing.Error
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%sframe.%s: %s", at(s, fe.Key), fe.Key, fe.Msg)
		}
		return nil, err
	}
	if s.Body.From < 0 || s.Body.From > 1024 || s.Body.To > 0 || s.Body.To < -1024 {
		return nil, fmt.Errorf("%sframe.body: the body is frame[from : end+to], with 0 <= from <= 1024 and -1024 <= to <= 0", at(s, "body"))
	}
	if !fr.Sized() && s.Body.To != 0 {
		return nil, fmt.Errorf("%sframe.body.to: a frame whose size its fields say has nothing after them", at(s, "body"))
	}
	if fr.Sized() && s.Body.From-s.Body.To > fr.MinLen() && s.Framing.Size > 0 && s.Body.From-s.Body.To > s.Framing.Size {
		return nil, fmt.Errorf("%sframe.body: larger than the frame", at(s, "body"))
	}
	plan, err := layout.Compile(&s.Schema, s.Limits)
	if err != nil {
		return nil, err
	}
	p := &Protocol{s: s, fr: fr, plan: plan, frame: plan.Type(FrameType), def: -1, max: fr.Framing().Max}
	if p.max <= s.Body.From {
		return nil, fmt.Errorf("%sframe.max: %d leaves nothing after body.from", at(s, "max"), p.max)
	}
	if p.frame < 0 {
		return nil, fmt.Errorf("%sno frame fields (seq)", at(s, "seq"))
	}
	if len(s.Transports) == 0 {
		return nil, fmt.Errorf("%smeta.transports: none", at(s, "meta.transports"))
	}
	frameDecls := plan.Fields(p.frame)
	if m := s.Messages; m != nil {
		p.on = plan.Slot(p.frame, m.On)
		if p.on < 0 {
			return nil, fmt.Errorf("%smessages.switch-on: %q is not an integer field of the frame's seq", at(s, "messages"), m.On)
		}
		p.cases = map[int64]int{}
		types := []string{}
		for _, c := range m.Cases {
			t := plan.Type(c.Type)
			if t < 0 || t == p.frame {
				return nil, fmt.Errorf("%smessages: case %d: unknown type %q", at(s, "messages"), c.Value, c.Type)
			}
			if _, dup := p.cases[c.Value]; dup {
				return nil, fmt.Errorf("%smessages: case %d given twice", at(s, "messages"), c.Value)
			}
			p.cases[c.Value] = t
			if !slices.Contains(types, c.Type) {
				types = append(types, c.Type)
			}
		}
		if m.Default != "" {
			if p.def = plan.Type(m.Default); p.def < 0 || p.def == p.frame {
				return nil, fmt.Errorf("%smessages.default: unknown type %q", at(s, "messages"), m.Default)
			}
			if !slices.Contains(types, m.Default) {
				types = append(types, m.Default)
			}
		}
		if len(types) == 0 {
			return nil, fmt.Errorf("%smessages: no cases", at(s, "messages"))
		}
		for _, name := range types {
			t := plan.Type(name)
			fields := append(plan.Fields(p.frame), plan.Fields(t)...)
			for _, d := range plan.Fields(t) {
				for _, h := range frameDecls {
					if h.Name == d.Name {
						return nil, fmt.Errorf("%stype %q: field %q is a field of the frame too", at(s, "types."+name), name, d.Name)
					}
				}
			}
			p.decls = append(p.decls, p.decl(name, plan.Doc(t), fields))
		}
	} else {
		p.decls = []dissect.TypeDecl{p.decl(MessageType, plan.Doc(p.frame), frameDecls)}
	}
	if err := dissect.Validate(s.Name, p.decls); err != nil {
		return nil, fmt.Errorf("%s%v", at(s, "meta.id"), err)
	}
	p.denseCases()
	p.meta = make([]TypeMeta, len(s.Schema.Types))
	for name, m := range s.Meta {
		if t := plan.Type(name); t >= 0 {
			p.meta[t] = m
		}
	}
	p.ex = exchange.NewPlan(p.decls, exchange.Rules{Bound: maxInflight})
	for i := range p.decls {
		d := &p.decls[i]
		if a := d.Exchange.Answers; a != "" && plan.Type(a) < 0 {
			return nil, fmt.Errorf("%stype %q answers %q, which is not a type of this file", at(s, "types."+d.Type), d.Type, a)
		}
	}
	p.detect = fr.Describe()
	p.compileFast(plan, fr)
	return p, nil
}

// fixedType is a layout type of numbers at fixed offsets (ok), for the
// fast path (parser.go).
type fixedType struct {
	fx    layout.Fixed
	whole layout.Fixed // a message's: the frame's fields, then its own
	end   int          // a message's: where its fields end in the frame
	name  string
	ok    bool
}

// maxDense bounds the table of cases by value.
const maxDense = 4096

// denseCases indexes the cases by value from the least, when they are
// within maxDense of one another.
func (p *Protocol) denseCases() {
	if len(p.cases) == 0 {
		return
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for v := range p.cases {
		lo, hi = min(lo, v), max(hi, v)
	}
	if uint64(hi-lo) >= maxDense {
		return
	}
	p.lo, p.dense = lo, make([]int16, hi-lo+1)
	for i := range p.dense {
		p.dense[i] = -1
	}
	for v, t := range p.cases {
		p.dense[v-lo] = int16(t)
	}
}

func (p *Protocol) decl(name, doc string, fields []dissect.FieldDecl) dissect.TypeDecl {
	m := p.s.Meta[name]
	if doc == "" {
		doc = name
	}
	if m.Exchange.Role == dissect.Reply && m.Exchange.Answers != "" {
		fields = append(fields, dissect.FieldDecl{Name: LatencyField, Kind: dissect.KindFloat, Unit: "ms", Role: dissect.RoleLatency,
			Doc: "capture time since the " + m.Exchange.Answers + " it answers (present when that was seen)"})
	}
	return dissect.TypeDecl{Type: name, Doc: doc, Fields: fields, Exchange: m.Exchange, Heartbeat: m.Heartbeat}
}

// at is the place of a setting, for an error: the key's, else its
// section's, else the description's ("" key); "" when written in Go.
func at(s *Spec, key string) string {
	for {
		if a := s.At[key]; a != "" {
			return a + ": "
		}
		i := strings.LastIndexByte(key, '.')
		if key == "" {
			return ""
		}
		if i < 0 {
			key = ""
		} else {
			key = key[:i]
		}
	}
}

func validProtoName(s string) bool {
	if s == "" || len(s) > 40 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Info describes the protocol (a new value on each call).
func (p *Protocol) Info() dissect.Info {
	decls := slices.Clone(p.decls)
	for i := range decls {
		decls[i].Fields = slices.Clone(decls[i].Fields)
	}
	return dissect.Info{
		Name:       p.s.Name,
		Proto:      p.s.Name,
		Title:      p.s.Title,
		Transports: slices.Clone(p.s.Transports),
		Ports:      slices.Clone(p.s.Ports),
		Detection:  p.detect,
		Types:      decls,
	}
}

// detectBound is the prefix of a stream's first bytes Detect looks at.
const detectBound = 2 << 10

// Detect says Yes when the first bytes hold a frame that confirms (as a
// resync candidate does), Maybe while they may still.
func (p *Protocol) Detect(s *dissect.StreamInfo, dir dissect.Dir, b []byte) dissect.Verdict {
	b = b[:min(len(b), detectBound)]
	switch p.fr.Judge(b, false, p.trial(p.plan.NewDecoder(), &dissect.Record{})) {
	case framing.Accept:
		return dissect.Yes
	case framing.Wait:
		if len(b) < detectBound {
			return dissect.Maybe
		}
	}
	return dissect.No
}

// NewParser returns a parser for one stream.
func (p *Protocol) NewParser(*dissect.StreamInfo) dissect.Parser {
	return &parser{p: p, dec: p.plan.NewDecoder(), ex: p.ex.Matcher()}
}

// Encode returns the frame of a message of type typ (a record type of
// the protocol) with the given fields, as the protocol's records hold
// them: the frame's fields and the message's, by name. Its length field
// and check are computed. For fuzz seeds and round trips: an encoder
// from the same description is no oracle of the description.
func (p *Protocol) Encode(typ string, fields []dissect.Field) ([]byte, error) {
	body, err := p.plan.Append(nil, p.frame, fields)
	if err != nil {
		return nil, err
	}
	if p.s.Messages != nil {
		t := p.plan.Type(typ)
		if t < 0 || t == p.frame {
			return nil, fmt.Errorf("%s: no message type %q", p.s.Name, typ)
		}
		if body, err = p.plan.Append(body, t, fields); err != nil {
			return nil, err
		}
	}
	sync := p.s.Framing.Sync
	frame := make([]byte, max(p.s.Body.From, len(sync)))
	copy(frame, sync)
	frame = append(frame[:p.s.Body.From], body...)
	if n := p.s.Framing.Size; n > 0 && len(frame)-p.s.Body.To < n {
		frame = append(frame, make([]byte, n-len(frame)+p.s.Body.To)...)
	}
	frame = append(frame, make([]byte, -p.s.Body.To)...)
	copy(frame, sync)
	if p.fr.Sized() {
		if err := p.fr.Seal(frame); err != nil {
			return nil, err
		}
	}
	return frame, nil
}

// Beside checks p against the protocols it will run with: a decode-as
// name or a default port already taken is an error naming where the file
// says it.
func (p *Protocol) Beside(others []dissect.Protocol) error {
	for _, o := range others {
		in := o.Info()
		if in.Name == p.s.Name {
			return fmt.Errorf("%smeta.id: %q is already the name of a protocol (%s)", at(p.s, "meta.id"), p.s.Name, in.Title)
		}
		for _, mine := range p.s.Ports {
			if slices.Contains(in.Ports, mine) {
				return fmt.Errorf("%smeta.ports: %s/%d is already a default port of %s", at(p.s, "meta.ports"), mine.Transport, mine.Port, in.Name)
			}
		}
	}
	return nil
}
