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

// RecordKeys are the names of the keys every record has: those of JSON,
// then the numeric times.
var recordKeys = [...]string{"proto", "type", "stream", "transport", "src", "dst", "time", "offset", "length", "time_epoch", "time_relative"}

// timeAliases are tshark's names of the numeric times.
var timeAliases = [...][2]string{{"frame.time_epoch", "time_epoch"}, {"frame.time_relative", "time_relative"}}

// IsRecordKey reports whether name is one of the keys every record has
// (proto, type, stream, transport, src, dst, time, offset, length), one of
// the numeric times (time_epoch: seconds since 1970; time_relative:
// seconds since the run's first packet) or tshark's name of one
// (frame.time_epoch, frame.time_relative).
func IsRecordKey(name string) bool { return recordKey(name) != "" }

// recordKey returns the record key name names, or "".
func recordKey(name string) string {
	for _, k := range recordKeys {
		if k == name {
			return k
		}
	}
	for _, a := range timeAliases {
		if a[0] == name {
			return a[1]
		}
	}
	return ""
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
	key   string // a record key, or ""
	proto string // the protocol of a field path or of a bare protocol name
	steps []step // the field path after the protocol; none: the protocol itself
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
	if k := recordKey(name); k != "" {
		p.key = k
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
		fn(recordValue(r, p.key))
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

// recordValue returns record key k of r: strings for proto, type,
// transport, src and dst; integers for stream, offset and length; time as
// an instant; time_epoch and time_relative as instants too, so that they
// compare exactly with numbers of seconds (time_relative as an instant of
// 1970: the seconds since the first packet).
func recordValue(r *dissect.Record, k string) dissect.Value {
	switch k {
	case "proto":
		return dissect.Str(r.Proto)
	case "type":
		return dissect.Str(r.Type)
	case "stream":
		return dissect.Int(int64(r.Stream))
	case "transport":
		return dissect.Str(r.Transport.String())
	case "src":
		return dissect.Str(r.Src)
	case "dst":
		return dissect.Str(r.Dst)
	case "time":
		return dissect.Time(r.Time)
	case "offset":
		return dissect.Int(r.Offset)
	case "length":
		return dissect.Int(r.Length)
	case "time_epoch":
		return dissect.Time(r.Time)
	case "time_relative":
		return dissect.Time(time.Unix(0, int64(Relative(r))))
	}
	return dissect.Value{}
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
