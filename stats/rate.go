package stats

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// maxRateKeys bounds the rate keys, and maxRateBytes the bytes they hold
// (budget.go); later keys are added up in one "(other)" row.
const maxRateKeys = 1 << 16

type rateKey struct {
	stream    int
	dir       uint8 // 0: sent by A, the source of the stream's first record
	proto     string
	typ       string
	sender    string // the RoleSender field's value
	sensor    int64  // the RoleSensor field's value, when hasSensor
	hasSensor bool
}

// rateAcc accumulates inter-arrival gaps with Welford's algorithm.
type rateAcc struct {
	key         rateKey
	src         string // the sender's address
	count       int64
	first, last time.Time
	mean, m2    float64 // of the gaps, seconds
	maxGap      time.Duration
	stallStart  time.Time
	slices      [sparkBuckets]uint32 // messages per slice of Rate.slices
}

func (a *rateAcc) add(t time.Time) {
	a.count++
	if a.count == 1 {
		a.first, a.last = t, t
		return
	}
	g := max(t.Sub(a.last), 0) // capture order; a time going back counts as 0
	if a.count == 2 || g > a.maxGap {
		a.maxGap, a.stallStart = g, a.last
	}
	a.last = t
	n := float64(a.count - 1) // gaps so far
	x := g.Seconds()
	d := x - a.mean
	a.mean += d / n
	a.m2 += d * (x - a.mean)
}

// rate is messages per second over the key's span: (count−1)/span, so
// evenly spaced messages give exactly their frequency; NaN with fewer than
// two messages or a span of 0.
func (a *rateAcc) rate() float64 {
	span := a.last.Sub(a.first).Seconds()
	if a.count < 2 || span <= 0 {
		return math.NaN()
	}
	return float64(a.count-1) / span
}

// jitter is the population standard deviation of the gaps, seconds.
func (a *rateAcc) jitter() float64 {
	if a.count < 2 {
		return math.NaN()
	}
	return math.Sqrt(max(a.m2/float64(a.count-1), 0))
}

// Rate is -z rate: per stream and message type (and sender and sensor,
// the fields of the type's declaration with RoleSender and RoleSensor),
// the rate, the inter-arrival gaps and their jitter, and the longest
// stall.
type Rate struct {
	decl    declCache
	keys    map[rateKey]*rateAcc
	a       map[int]string // stream → A, the source of its first record
	order   []*rateAcc
	other   *rateAcc
	bytes   byteBudget // of the keys' strings (maxRateBytes)
	maxKeys int        // maxRateKeys, or scaled (ScaleMemory)
	first   time.Time
	seen    bool
	slices  timeSlices // of every row's sparkline
	buf     []byte
}

// NewRate returns an empty rate statistic that reads the records'
// declarations with decl.
func NewRate(decl DeclFunc) *Rate {
	return &Rate{decl: declCache{fn: decl}, keys: map[rateKey]*rateAcc{}, a: map[int]string{}, bytes: byteBudget{max: maxRateBytes}, maxKeys: maxRateKeys}
}

// Name returns "rate".
func (s *Rate) Name() string { return "rate" }

// Record adds a message's arrival; events (gap, skipped) are not messages.
func (s *Rate) Record(r *dissect.Record) {
	if r.Type == dissect.TypeGap || r.Type == dissect.TypeSkipped {
		return
	}
	if !s.seen {
		s.first, s.seen = r.Time, true
	}
	k := rateKey{stream: r.Stream, proto: r.Proto, typ: r.Type}
	a, ok := s.a[r.Stream]
	if !ok && len(s.a) < maxConvs {
		a = strings.Clone(r.Src)
		s.a[r.Stream] = a
	}
	if r.Src != a {
		k.dir = 1
	}
	if d := s.decl.of(r); d != nil {
		if f := d.FieldWith(dissect.RoleSender); f != nil {
			if v, ok := r.Fields.Get(f.Name); ok && v.Kind() == dissect.KindString {
				k.sender = v.Str()
			}
		}
		if f := d.FieldWith(dissect.RoleSensor); f != nil {
			if v, ok := r.Fields.Get(f.Name); ok && isInt(v) {
				k.sensor, k.hasSensor = v.Int(), true
			}
		}
	}
	acc := s.keys[k]
	if acc == nil {
		if len(s.keys) >= s.maxKeys || !s.bytes.take(rateKeyCost+len(k.proto)+len(k.typ)+len(k.sender)+len(r.Src)) {
			if s.other == nil {
				s.other = &rateAcc{key: rateKey{stream: -1, typ: "(other)"}}
			}
			acc = s.other
		} else {
			k.proto, k.typ, k.sender = strings.Clone(k.proto), strings.Clone(k.typ), strings.Clone(k.sender)
			acc = &rateAcc{key: k, src: strings.Clone(r.Src)}
			s.keys[k] = acc
			s.order = append(s.order, acc)
		}
	}
	acc.add(r.Time)
	i := s.slices.slot(r.Time, func() {
		for _, a := range s.order {
			mergeSlices(&a.slices)
		}
		if s.other != nil {
			mergeSlices(&s.other.slices)
		}
	})
	acc.slices[i]++
}

func (s *Rate) rows() []*rateAcc {
	rows := slices.Clone(s.order)
	slices.SortStableFunc(rows, func(a, b *rateAcc) int {
		x, y := a.key, b.key
		if x.stream != y.stream {
			return x.stream - y.stream
		}
		if c := strings.Compare(x.proto, y.proto); c != 0 {
			return c
		}
		if x.dir != y.dir {
			return int(x.dir) - int(y.dir)
		}
		if c := strings.Compare(x.typ, y.typ); c != 0 {
			return c
		}
		if c := strings.Compare(x.sender, y.sender); c != 0 {
			return c
		}
		switch {
		case x.sensor < y.sensor:
			return -1
		case x.sensor > y.sensor:
			return 1
		}
		return 0
	})
	if s.other != nil {
		rows = append(rows, s.other)
	}
	return rows
}

func nan(v float64, f func(float64) string) string {
	if v != v {
		return "-"
	}
	return f(v)
}

func msOf(sec float64) string { return ms(sec * 1e3) }

// WriteTable writes one row per key.
func (s *Rate) WriteTable(w io.Writer, o TableOptions) error {
	t := &table{
		Title: "rate: message rates and inter-arrival gaps",
		Cols: []column{
			// What a row is (type, sender, sensor), its count, and
			// whether it stalled (the longest gap and when) are kept
			// longest; the other gap statistics go first.
			{Name: "STREAM", Right: true, Drop: 6}, {Name: "PROTO", Drop: 16}, {Name: "DIR", Drop: 7}, {Name: "TYPE", Middle: true, Min: 16},
			{Name: "SENDER", Drop: 5}, {Name: "SENSOR", Right: true, Drop: 4},
			{Name: "MSGS", Right: true}, {Name: "msg/s", Right: true, Drop: 1}, {Name: "MEAN GAP ms", Right: true, Drop: 15},
			{Name: "MAX GAP ms", Right: true, Drop: 2}, {Name: "JITTER ms", Right: true, Drop: 14}, {Name: "STALL AT s", Right: true, Drop: 3},
		},
	}
	if o.Graph {
		t.Cols = append(t.Cols, column{Name: "ACTIVITY", Drop: 13})
	}
	// A narrow table draws half as many slices, each two of the run's.
	merge := o.Width > 0 && o.Width < 120
	slices := func(a *rateAcc) []uint32 {
		c := a.slices
		n := s.slices.used
		if merge {
			mergeSlices(&c)
			n = (n + 1) / 2
		}
		return c[:n]
	}
	for _, a := range s.rows() {
		stream := itoa(int64(a.key.stream))
		if a.key.stream < 0 {
			stream = "-"
		}
		sensor := ""
		if a.key.hasSensor {
			sensor = itoa(a.key.sensor)
		}
		mean, maxGap, stall := math.NaN(), math.NaN(), math.NaN()
		if a.count >= 2 {
			mean, maxGap, stall = a.mean, a.maxGap.Seconds(), a.stallStart.Sub(s.first).Seconds()
		}
		dir := "A→B"
		if a.key.dir == 1 {
			dir = "B→A"
		}
		if a.key.stream < 0 {
			dir = ""
		}
		t.Add(stream, text(a.key.proto), dir, text(a.key.typ), text(a.key.sender), sensor, itoa(a.count),
			nan(a.rate(), func(v float64) string { return ms(v) }), nan(mean, msOf), nan(maxGap, msOf),
			nan(a.jitter(), msOf), nan(stall, secs), spark(slices(a), o.ASCII))
	}
	if sliceW := s.slices.w; o.Graph && s.seen {
		if merge {
			sliceW *= 2
		}
		t.Notes = append(t.Notes, "ACTIVITY: the row's messages in slices of "+secs(sliceW.Seconds())+" s from the first record, scaled to the row's busiest (a space: none)")
	}
	t.Notes = append(t.Notes, "DIR: A is the source of the stream's first record (as in -z conv); msg/s = (messages-1)/span; jitter = standard deviation of the gaps; stall = the longest gap, at its start (s from the first record)")
	return write(t, w, o)
}

// WriteJSON writes one row per key.
func (s *Rate) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, a := range s.rows() {
		r := newRow(s.buf, "rate")
		r.int("stream", int64(a.key.stream))
		r.str("proto", a.key.proto)
		if a.key.stream >= 0 {
			r.str("src", a.src)
		}
		r.str("type", a.key.typ)
		if a.key.sender != "" {
			r.str("sender", a.key.sender)
		}
		if a.key.hasSensor {
			r.int("sensor", a.key.sensor)
		}
		r.int("messages", a.count)
		r.time("first", a.first)
		r.time("last", a.last)
		r.secs("span_s", a.last.Sub(a.first).Seconds())
		if a.count >= 2 && a.rate() == a.rate() {
			r.float("rate_per_s", a.rate())
		} else {
			r.null("rate_per_s")
		}
		if a.count >= 2 {
			r.ms("mean_gap_ms", a.mean*1e3)
			r.ms("max_gap_ms", a.maxGap.Seconds()*1e3)
			r.ms("jitter_ms", a.jitter()*1e3)
			r.time("stall_start", a.stallStart)
		} else {
			r.null("mean_gap_ms")
			r.null("max_gap_ms")
			r.null("jitter_ms")
			r.null("stall_start")
		}
		r.end(bw)
		s.buf = r.b
	}
	return bw.Flush()
}
