package dissect

import (
	"fmt"
	"strconv"
	"strings"
)

// Registry is the set of protocols of one run and the decode-as rules that
// force a protocol on matching streams. It is a value built from an explicit
// list (see package dissect/all); nothing registers itself.
//
// A stream's protocol is chosen in this order:
//  1. a decode-as rule whose transport and port match either end (serial
//     rules match every serial link);
//  2. content detection: each protocol's Detect, in list order, over the
//     first bytes of each direction; the first Yes wins;
//  3. a protocol's default port, matching either end;
//  4. none: the stream's bytes are reported as skipped.
type Registry struct {
	protos []Protocol
	rules  []Rule
}

// Rule is a decode-as rule: streams of Transport with Port at either end
// (any serial link when Transport is Serial) are decoded as Proto.
type Rule struct {
	Transport Transport
	Port      uint16
	Proto     Protocol
}

// NewRegistry returns a registry of protos. Two protocols with the same
// decode-as name, or the same default port, are an error.
func NewRegistry(protos ...Protocol) (*Registry, error) {
	names := map[string]bool{}
	ports := map[Port]string{}
	for _, p := range protos {
		in := p.Info()
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
	}
	return &Registry{protos: protos}, nil
}

// Protocols returns the registered protocols in detection order.
func (r *Registry) Protocols() []Protocol { return r.protos }

// Lookup returns the protocol with decode-as name name, or nil.
func (r *Registry) Lookup(name string) Protocol {
	for _, p := range r.protos {
		if p.Info().Name == name {
			return p
		}
	}
	return nil
}

// Names returns the decode-as names, in order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.protos))
	for i, p := range r.protos {
		out[i] = p.Info().Name
	}
	return out
}

// AddRule adds a decode-as rule. Later rules take precedence over earlier
// ones for the same transport and port.
func (r *Registry) AddRule(rule Rule) { r.rules = append(r.rules, rule) }

// ParseDecodeAs parses a decode-as rule in tshark's syntax:
// "tcp.port==4000,deltarobot", "udp.port==7681,roboid" or
// "serial,handcontrol".
func (r *Registry) ParseDecodeAs(s string) (Rule, error) {
	sel, name, ok := strings.Cut(s, ",")
	if !ok {
		return Rule{}, fmt.Errorf("decode-as %q: want SELECTOR,PROTOCOL, e.g. tcp.port==4000,deltarobot", s)
	}
	sel, name = strings.TrimSpace(sel), strings.TrimSpace(name)
	p := r.Lookup(name)
	if p == nil {
		return Rule{}, fmt.Errorf("decode-as %q: unknown protocol %q (known: %s)", s, name, strings.Join(r.Names(), ", "))
	}
	var rule Rule
	rule.Proto = p
	if sel == "serial" {
		rule.Transport = Serial
	} else {
		field, val, ok := strings.Cut(sel, "==")
		if !ok {
			return Rule{}, fmt.Errorf("decode-as %q: selector %q must be tcp.port==N, udp.port==N or serial", s, sel)
		}
		switch strings.TrimSpace(field) {
		case "tcp.port":
			rule.Transport = TCP
		case "udp.port":
			rule.Transport = UDP
		default:
			return Rule{}, fmt.Errorf("decode-as %q: selector %q must be tcp.port==N, udp.port==N or serial", s, field)
		}
		port, err := strconv.ParseUint(strings.TrimSpace(val), 10, 16)
		if err != nil || port == 0 {
			return Rule{}, fmt.Errorf("decode-as %q: %q is not a port number (1-65535)", s, val)
		}
		rule.Port = uint16(port)
	}
	if !supports(p.Info(), rule.Transport) {
		return Rule{}, fmt.Errorf("decode-as %q: %s does not run over %s", s, name, rule.Transport)
	}
	return rule, nil
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

// forced returns the protocol of the last decode-as rule matching s.
func (r *Registry) forced(s *StreamInfo) (Protocol, bool) {
	for i := len(r.rules) - 1; i >= 0; i-- {
		rule := r.rules[i]
		if rule.Transport != s.Transport {
			continue
		}
		if rule.Transport == Serial || matchPort(s, rule.Port) {
			return rule.Proto, true
		}
	}
	return nil, false
}

// candidates returns the protocols that may run over t, for detection.
func (r *Registry) candidates(t Transport) []Protocol {
	var out []Protocol
	for _, p := range r.protos {
		if supports(p.Info(), t) {
			out = append(out, p)
		}
	}
	return out
}

// byPort returns the protocol whose default port matches s, or nil.
func (r *Registry) byPort(s *StreamInfo) Protocol {
	for _, p := range r.protos {
		for _, port := range p.Info().Ports {
			if port.Transport == s.Transport && matchPort(s, port.Port) {
				return p
			}
		}
	}
	return nil
}
