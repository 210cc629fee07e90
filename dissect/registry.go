package dissect

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Registry is the set of protocols of one run and the decode-as rules that
// force a protocol on matching streams. It is a value built from an explicit
// list (see package dissect/all); nothing registers itself. Each protocol's
// [Info] is read once, by [NewRegistry].
//
// A stream's protocol is chosen in this order:
//  1. a decode-as rule whose transport and port match either end (serial
//     rules match every serial link);
//  2. content detection: each protocol's Detect, in list order, over the
//     first bytes of each direction; the first Yes wins;
//  3. a protocol's default port, matching either end;
//  4. none yet. A UDP flow's bytes are then reported as skipped. A byte
//     stream (TCP, serial) is skipped too, but keeps looking: the parsers
//     of the protocols that detect by content (a non-empty
//     [Info.Detection]) search its latest bytes for a sync point, and the
//     first found that is followed by two whole messages chooses the
//     protocol from that point on (see [Stream]). Protocols without
//     content detection are chosen only by rule or port.
type Registry struct {
	protos  []Protocol
	entries []entry
	rules   []rule
	// by transport: the protocols that may run over it, and those of them
	// that detect by content (hunted for on byte streams)
	cands, hunted [Serial + 1][]*entry
	// the declarations, by "proto" key (registry_decl.go)
	byProto   map[string]*protoDecls
	protoKeys []string
	events    []TypeDecl
}

type entry struct {
	p    Protocol
	info Info
}

type rule struct {
	Rule
	e *entry
}

// Rule is a decode-as rule: streams of Transport with a port from Port to
// Last at either end (any serial link when Transport is Serial) are
// decoded as Proto. Last 0 (or below Port) means Port alone. A range is
// one rule, whatever its size.
type Rule struct {
	Transport Transport
	Port      uint16
	Last      uint16
	Proto     Protocol
}

// matches reports whether either end of s has a port of the rule.
func (ru *Rule) matches(s *StreamInfo) bool {
	last := max(ru.Last, ru.Port)
	in := func(p uint16) bool { return p >= ru.Port && p <= last }
	return in(s.Addr[0].Port()) || in(s.Addr[1].Port())
}

// NewRegistry returns a registry of protos. Two protocols with the same
// decode-as name or the same default port, a declaration that is not
// well formed ([Validate]), and one type declared by two protocols of one
// proto key are errors.
func NewRegistry(protos ...Protocol) (*Registry, error) {
	r := &Registry{protos: protos, entries: make([]entry, len(protos)),
		byProto: map[string]*protoDecls{}, events: EventTypes()}
	names := map[string]bool{}
	ports := map[Port]string{}
	for i, p := range protos {
		in := infoOf(p)
		r.entries[i] = entry{p: p, info: in}
		if names[in.Name] {
			return nil, fmt.Errorf("dissect: protocol %q registered twice", in.Name)
		}
		names[in.Name] = true
		for _, port := range in.Ports {
			if other, dup := ports[port]; dup {
				return nil, fmt.Errorf("dissect: %s port %d claimed by both %s and %s", port.Transport, port.Port, other, in.Name)
			}
			ports[port] = in.Name
		}
		if err := r.index(&r.entries[i]); err != nil {
			return nil, err
		}
	}
	for i := range r.entries {
		e := &r.entries[i]
		for _, t := range e.info.Transports {
			if t > Serial {
				continue
			}
			r.cands[t] = append(r.cands[t], e)
			if e.info.Detection != "" {
				r.hunted[t] = append(r.hunted[t], e)
			}
		}
	}
	return r, nil
}

// infoOf returns p's Info with slices of its own.
func infoOf(p Protocol) Info {
	in := p.Info()
	in.Transports = slices.Clone(in.Transports)
	in.Ports = slices.Clone(in.Ports)
	in.Types = slices.Clone(in.Types)
	return in
}

// Protocols returns the registered protocols in detection order.
func (r *Registry) Protocols() []Protocol { return slices.Clone(r.protos) }

// Lookup returns the protocol with decode-as name name, or nil.
func (r *Registry) Lookup(name string) Protocol {
	if e := r.lookup(name); e != nil {
		return e.p
	}
	return nil
}

func (r *Registry) lookup(name string) *entry {
	for i := range r.entries {
		if r.entries[i].info.Name == name {
			return &r.entries[i]
		}
	}
	return nil
}

// Names returns the decode-as names, in order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.entries))
	for i := range r.entries {
		out[i] = r.entries[i].info.Name
	}
	return out
}

// AddRule adds a decode-as rule. Later rules take precedence over earlier
// ones for the same transport and port.
func (r *Registry) AddRule(ru Rule) {
	r.rules = append(r.rules, rule{Rule: ru, e: &entry{p: ru.Proto, info: infoOf(ru.Proto)}})
}

// ParseDecodeAs parses a decode-as rule in tshark's syntax:
// "tcp.port==4000,deltarobot", "udp.port==7681,roboid", a range of ports
// "tcp.port==3999-4001,deltarobot" or "serial,handcontrol".
func (r *Registry) ParseDecodeAs(s string) (Rule, error) {
	sel, name, ok := strings.Cut(s, ",")
	if !ok {
		return Rule{}, fmt.Errorf("decode-as %q: want SELECTOR,PROTOCOL, e.g. tcp.port==4000,deltarobot", s)
	}
	sel, name = strings.TrimSpace(sel), strings.TrimSpace(name)
	e := r.lookup(name)
	if e == nil {
		return Rule{}, fmt.Errorf("decode-as %q: unknown protocol %q (known: %s)", s, name, strings.Join(r.Names(), ", "))
	}
	var rule Rule
	rule.Proto = e.p
	if sel == "serial" {
		rule.Transport = Serial
	} else {
		field, val, ok := strings.Cut(sel, "==")
		if !ok {
			return Rule{}, fmt.Errorf("decode-as %q: selector %q must be tcp.port==N, udp.port==N (or a range N-M) or serial", s, sel)
		}
		switch strings.TrimSpace(field) {
		case "tcp.port":
			rule.Transport = TCP
		case "udp.port":
			rule.Transport = UDP
		default:
			return Rule{}, fmt.Errorf("decode-as %q: selector %q must be tcp.port==N, udp.port==N (or a range N-M) or serial", s, field)
		}
		first, last, isRange := strings.Cut(val, "-")
		port, err := parsePort(first)
		if err != nil {
			return Rule{}, fmt.Errorf("decode-as %q: %q is not a port number (1-65535) or a range (3999-4001)", s, val)
		}
		rule.Port = port
		if isRange {
			hi, err := parsePort(last)
			if err != nil || hi < port {
				return Rule{}, fmt.Errorf("decode-as %q: %q is not a range of ports: want FIRST-LAST, 1 <= FIRST <= LAST <= 65535", s, val)
			}
			rule.Last = hi
		}
	}
	if !supports(&e.info, rule.Transport) {
		return Rule{}, fmt.Errorf("decode-as %q: %s does not run over %s", s, name, rule.Transport)
	}
	return rule, nil
}

func parsePort(s string) (uint16, error) {
	p, err := strconv.ParseUint(strings.TrimSpace(s), 10, 16)
	if err != nil || p == 0 {
		return 0, fmt.Errorf("%q is not a port number", s)
	}
	return uint16(p), nil
}

func supports(in *Info, t Transport) bool {
	for _, x := range in.Transports {
		if x == t {
			return true
		}
	}
	return false
}

func matchPort(s *StreamInfo, port uint16) bool {
	return s.Addr[0].Port() == port || s.Addr[1].Port() == port
}

// forced returns the entry of the protocol the stream's link carries
// (a VRPN log), else of the last decode-as rule matching s, or nil.
func (r *Registry) forced(s *StreamInfo) *entry {
	if s.Carries != "" {
		if e := r.lookup(s.Carries); e != nil {
			return e
		}
	}
	for i := len(r.rules) - 1; i >= 0; i-- {
		ru := &r.rules[i]
		if ru.Transport != s.Transport {
			continue
		}
		if ru.Transport == Serial || ru.matches(s) {
			return ru.e
		}
	}
	return nil
}

// candidates returns the protocols that may run over t, for detection.
func (r *Registry) candidates(t Transport) []*entry {
	if t > Serial {
		return nil
	}
	return r.cands[t]
}

// huntable returns the protocols that run over t and detect by content:
// those whose parsers look for a sync point in a stream of unknown
// protocol.
func (r *Registry) huntable(t Transport) []*entry {
	if t > Serial {
		return nil
	}
	return r.hunted[t]
}

// byPort returns the entry whose default port matches s, or nil.
func (r *Registry) byPort(s *StreamInfo) *entry {
	for i := range r.entries {
		for _, port := range r.entries[i].info.Ports {
			if port.Transport == s.Transport && matchPort(s, port.Port) {
				return &r.entries[i]
			}
		}
	}
	return nil
}
