// Package filter selects and names parts of dissect records: field paths
// (deltarobot.x, vrpn.pos[0], roboid.values[0].semantics) shared by the
// display filter (-Y), field output (-e) and statistics, and the display
// filter language itself.
package query

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// IsRecordKey reports whether name names a key of the record's envelope
// (dissect.Envelope): a JSON key (proto, type, stream, ...), a numeric
// time (time_epoch, time_relative), a view of the endpoints (ip.src,
// tcp.port, ...), or tshark's name of one (frame.time_epoch).
func IsRecordKey(name string) bool { return recordKey(name) != "" }

// recordKey returns the envelope key name names, or "".
func recordKey(name string) string {
	k, _ := dissect.LookupEnvelope(name)
	return k.Name
}

// IsTimeKey reports whether key (a [Path.RecordKey]) is one of the numeric
// times, time_epoch or time_relative: its value is a KindTime (exact to
// the nanosecond, compared with numbers of seconds) that means seconds,
// since 1970 or since the run's first packet, and is written as seconds
// with nine fraction digits.
func IsTimeKey(key string) bool { return key == "time_epoch" || key == "time_relative" }

// Path names a value of a record: a record key ("stream"), a protocol
// ("vrpn": true for its records), or a field of a protocol's records
// ("vrpn.quat.w", "vrpn.pos[0]", "roboid.values[0].semantics"). A step
// without an index into an array applies to each element in turn
// ("roboid.values.semantics" is the semantics of every value).
type Path struct {
	name  string
	key   string // a record key (dissect.EnvelopeKey.Name), or ""
	env   *dissect.EnvelopeKey
	info  func(*dissect.Record) string // the value of info, when the filter was given it
	proto string                       // the protocol of a field path or of a bare protocol name
	steps []step                       // the field path after the protocol; none: the protocol itself
}

type step struct {
	key   string // "": an index step
	index int
}

// String returns the path as it was written.
func (p Path) String() string { return p.name }

// Proto returns the protocol of a field path or bare protocol name, or ""
// for a record key.
func (p Path) Proto() string { return p.proto }

// RecordKey returns the record key the path names, or "".
func (p Path) RecordKey() string { return p.key }

// Field returns the first field key of a field path ("quat" for
// vrpn.quat.w), or "" for a record key or a bare protocol name.
func (p Path) Field() string {
	if len(p.steps) == 0 {
		return ""
	}
	return p.steps[0].key
}

// ParsePath parses a path: a record key, or a protocol name followed by
// field keys separated by dots, each optionally followed by [N] indexes.
// Whether the protocol and its fields exist is not checked here.
func ParsePath(name string) (Path, error) {
	p := Path{name: name}
	if k, ok := dissect.LookupEnvelope(name); ok {
		p.key, p.env = k.Name, &k
		return p, nil
	}
	proto, rest, dot := strings.Cut(name, ".")
	if !isIdent(proto) {
		return p, fmt.Errorf("%q: a field name starts with a protocol or record key (deltarobot.x, stream)", name)
	}
	if dot && rest == "" {
		return p, fmt.Errorf("%q: a field key is missing after the dot", name)
	}
	p.proto = proto
	for rest != "" {
		var seg string
		seg, rest, dot = strings.Cut(rest, ".")
		if dot && rest == "" {
			return p, fmt.Errorf("%q: a field key is missing after the dot", name)
		}
		key, idx, hasIdx := strings.Cut(seg, "[")
		if !isIdent(key) {
			return p, fmt.Errorf("%q: bad field key %q", name, key)
		}
		p.steps = append(p.steps, step{key: key})
		for hasIdx {
			var num string
			num, idx, hasIdx = strings.Cut(idx, "]")
			n, err := strconv.Atoi(num)
			if err != nil || n < 0 || !hasIdx {
				return p, fmt.Errorf("%q: bad index [%s", name, num)
			}
			p.steps = append(p.steps, step{index: n})
			if idx == "" {
				break
			}
			if idx[0] != '[' {
				return p, fmt.Errorf("%q: unexpected %q after an index", name, idx)
			}
			idx, hasIdx = idx[1:], true
		}
	}
	return p, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Each calls fn with every value the path names in r, until fn returns
// false: none when r is not of the path's protocol or lacks the field, one
// for a record key or a scalar field, one per element where a key step met
// an array. A bare protocol name gives Bool(true) for its records. Each
// allocates nothing.
func (p *Path) Each(r *dissect.Record, fn func(dissect.Value) bool) {
	if p.key != "" {
		if p.info != nil {
			fn(dissect.Str(p.info(r)))
		} else if p.env.Values != nil {
			vs, n := p.env.Values(r)
			for _, v := range vs[:n] {
				if !fn(v) {
					return
				}
			}
		}
		return
	}
	if r.Proto != p.proto {
		return
	}
	if len(p.steps) == 0 {
		fn(dissect.Bool(true))
		return
	}
	walk(dissect.Object(r.Fields), p.steps, fn)
}

// walk applies steps to v; it returns false when fn asked to stop.
func walk(v dissect.Value, steps []step, fn func(dissect.Value) bool) bool {
	if len(steps) == 0 {
		return fn(v)
	}
	s := steps[0]
	switch {
	case s.key == "":
		items := v.Items()
		if v.Kind() != dissect.KindArray || s.index >= len(items) {
			return true
		}
		return walk(items[s.index].Value, steps[1:], fn)
	case v.Kind() == dissect.KindObject:
		for _, f := range v.Items() {
			if f.Key == s.key {
				return walk(f.Value, steps[1:], fn)
			}
		}
	case v.Kind() == dissect.KindArray:
		for _, it := range v.Items() {
			if !walk(it.Value, steps, fn) {
				return false
			}
		}
	}
	return true
}

// Lookup returns the first value the path names in r (see [Path.Each]).
func (p *Path) Lookup(r *dissect.Record) (v dissect.Value, ok bool) {
	p.Each(r, func(x dissect.Value) bool {
		v, ok = x, true
		return false
	})
	return v, ok
}

// Relative returns r's time since the run's first packet (r.Epoch), the
// time_relative key: 0 when the run had no timestamped packet.
// Differences beyond about 292 years saturate.
func Relative(r *dissect.Record) time.Duration {
	if r.Epoch.IsZero() {
		return 0
	}
	return r.Time.Sub(r.Epoch)
}

// Seconds returns an instant as seconds since 1970, the number a filter
// compares time with.
func Seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
