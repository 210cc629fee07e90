package stats

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
)

// Bounds of rtt.
const (
	// maxSamples is the number of exact samples kept over all keys; past
	// it, a key that gets a sample switches to a histogram.
	maxSamples = 1 << 20
	// maxRTTKeys bounds the keys, and maxRTTKeyBytes the bytes they hold
	// (budget.go); later keys are counted in one "(other)" row.
	maxRTTKeys = 4096
	// maxCodeNames bounds the remembered request names (request keys
	// per stream), and maxRTTNameBytes their bytes; past them a reply to
	// a request not remembered is named by its code, and the table says
	// how many were not remembered.
	maxCodeNames = 1 << 16
)

type rttKey struct {
	stream  int
	proto   string
	request string
}

type rttAcc struct {
	key       rttKey
	requests  int64
	count     int64
	min, max  float64
	sum       float64
	samples   []float64 // exact, while hist is nil
	hist      *logHist
	sortedLen int
}

func (a *rttAcc) add(v float64, s *RTT) {
	if a.count == 0 || v < a.min {
		a.min = v
	}
	if a.count == 0 || v > a.max {
		a.max = v
	}
	a.count++
	a.sum += v
	if a.hist != nil {
		a.hist.add(v)
		return
	}
	if s.samples >= s.maxSamples {
		a.hist = new(logHist)
		for _, x := range a.samples {
			a.hist.add(x)
		}
		s.samples -= len(a.samples)
		a.samples = nil
		a.hist.add(v)
		return
	}
	a.samples = append(a.samples, v)
	s.samples++
}

// quantile returns the nearest-rank p-quantile (0 < p ≤ 1): the smallest
// sample such that at least p of the samples are ≤ it, the sample of rank
// ceil(p·n) in ascending order.
func (a *rttAcc) quantile(p float64) float64 {
	n := a.count
	if n == 0 {
		return math.NaN()
	}
	rank := int64(math.Ceil(p * float64(n)))
	rank = min(max(rank, 1), n)
	if a.hist != nil {
		return min(max(a.hist.rank(rank), a.min), a.max)
	}
	if a.sortedLen != len(a.samples) {
		slices.Sort(a.samples)
		a.sortedLen = len(a.samples)
	}
	return a.samples[rank-1]
}

// logHist is a histogram of positive values in buckets growing by 2 %:
// a bucket's geometric middle is within 1 % of every value in it.
type logHist struct {
	counts [histBuckets]uint64
}

const (
	histLo      = 1e-6 // ms; bucket 0 holds everything below, 0 and negatives included
	histGrowth  = 1.02
	histBuckets = 1 + 1745 // up to histLo·1.02^1745 ≈ 1e9 ms; the last bucket holds more
)

var logGrowth = math.Log(histGrowth)

func (h *logHist) add(v float64) {
	h.counts[histIndex(v)]++
}

func histIndex(v float64) int {
	if !(v >= histLo) {
		return 0
	}
	i := 1 + int(math.Log(v/histLo)/logGrowth)
	return min(i, histBuckets-1)
}

// rank returns the middle of the bucket holding the sample of rank k (from 1).
func (h *logHist) rank(k int64) float64 {
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= uint64(k) {
			if i == 0 {
				return 0
			}
			return histLo * math.Pow(histGrowth, float64(i-1)+0.5)
		}
	}
	return math.NaN()
}

// RTT is -z rtt: request→reply round trips and latencies per stream and
// request type, as the records' declarations describe them
// ([dissect.Exchange]): every record of a Request type is a request, and
// every record of a Reply type that carries its RoleLatency field is one
// sample of the request it answers.
type RTT struct {
	decl       declCache
	keys       map[rttKey]*rttAcc
	order      []*rttAcc
	other      *rttAcc
	names      map[reqKey]string // stream and request key → request type
	samples    int
	maxSamples int
	keyBytes   byteBudget // of keys' strings (maxRTTKeyBytes)
	nameBytes  byteBudget // of names' strings (maxRTTNameBytes)
	maxKeys    int        // maxRTTKeys, or scaled (ScaleMemory)
	maxNames   int        // maxCodeNames, or scaled
	unnamed    int64      // requests whose key and type were not remembered: names was full
	buf        []byte
}

// reqKey is a request's key (its RoleRequestKey field: an integer or a
// string) on one stream.
type reqKey struct {
	stream int
	n      int64
	s      string
	isStr  bool
}

// NewRTT returns an empty rtt statistic that reads the records'
// declarations with decl.
func NewRTT(decl DeclFunc) *RTT {
	return &RTT{decl: declCache{fn: decl}, keys: map[rttKey]*rttAcc{}, names: map[reqKey]string{}, maxSamples: maxSamples,
		keyBytes: byteBudget{max: maxRTTKeyBytes}, nameBytes: byteBudget{max: maxRTTNameBytes}, maxKeys: maxRTTKeys, maxNames: maxCodeNames}
}

// Name returns "rtt".
func (s *RTT) Name() string { return "rtt" }

func (s *RTT) acc(k rttKey) *rttAcc {
	if a := s.keys[k]; a != nil {
		return a
	}
	if len(s.keys) >= s.maxKeys || !s.keyBytes.take(rttKeyCost+len(k.proto)+len(k.request)) {
		if s.other == nil {
			s.other = &rttAcc{key: rttKey{stream: -1, request: "(other)"}}
		}
		return s.other
	}
	a := &rttAcc{key: rttKey{stream: k.stream, proto: strings.Clone(k.proto), request: strings.Clone(k.request)}}
	s.keys[a.key] = a
	s.order = append(s.order, a)
	return a
}

// Record counts a request, or takes a reply's latency under the request
// it answers: the declaration's Exchange.Answers, else the type of the
// first request seen on the stream with the key the reply's
// RoleRequestKey field holds, else "code KEY", else "(unknown request)".
// Records of other types are ignored.
func (s *RTT) Record(r *dissect.Record) {
	d := s.decl.of(r)
	if d == nil {
		return
	}
	switch d.Exchange.Role {
	case dissect.Request:
		s.acc(rttKey{r.Stream, r.Proto, r.Type}).requests++
		if k, ok := requestKey(r, d); ok {
			if _, ok := s.names[k]; !ok {
				if len(s.names) < s.maxNames && s.nameBytes.take(rttNameCost+len(k.s)+len(r.Type)) {
					k.s = strings.Clone(k.s)
					s.names[k] = strings.Clone(r.Type)
				} else {
					s.unnamed++
				}
			}
		}
	case dissect.Reply:
		f := d.FieldWith(dissect.RoleLatency)
		if f == nil {
			return
		}
		lat, ok := r.Fields.Get(f.Name)
		if !ok || !isNumber(lat) {
			return
		}
		req := d.Exchange.Answers
		if req == "" {
			req = "(unknown request)"
			if k, ok := requestKey(r, d); ok {
				if n, ok := s.names[k]; ok {
					req = n
				} else if k.isStr {
					req = "code " + k.s
				} else {
					req = "code " + strconv.FormatInt(k.n, 10)
				}
			}
		}
		s.acc(rttKey{r.Stream, r.Proto, req}).add(lat.Float(), s)
	}
}

// requestKey returns the value of r's RoleRequestKey field on r's stream,
// when d declares one and r carries it as an integer or a string. The
// string may alias r.
func requestKey(r *dissect.Record, d *dissect.TypeDecl) (reqKey, bool) {
	f := d.FieldWith(dissect.RoleRequestKey)
	if f == nil {
		return reqKey{}, false
	}
	v, ok := r.Fields.Get(f.Name)
	switch {
	case !ok:
		return reqKey{}, false
	case isInt(v):
		return reqKey{stream: r.Stream, n: v.Int()}, true
	case v.Kind() == dissect.KindString:
		return reqKey{stream: r.Stream, s: v.Str(), isStr: true}, true
	}
	return reqKey{}, false
}

func isNumber(v dissect.Value) bool {
	switch v.Kind() {
	case dissect.KindFloat, dissect.KindFloat32, dissect.KindInt, dissect.KindUint:
		return true
	}
	return false
}

func isInt(v dissect.Value) bool { return v.Kind() == dissect.KindInt || v.Kind() == dissect.KindUint }

func (s *RTT) rows() []*rttAcc {
	rows := slices.Clone(s.order)
	slices.SortStableFunc(rows, func(a, b *rttAcc) int {
		if a.key.stream != b.key.stream {
			return a.key.stream - b.key.stream
		}
		if c := strings.Compare(a.key.proto, b.key.proto); c != 0 {
			return c
		}
		return strings.Compare(a.key.request, b.key.request)
	})
	if s.other != nil {
		rows = append(rows, s.other)
	}
	return rows
}

func (a *rttAcc) unanswered() int64 { return max(a.requests-a.count, 0) }

// WriteTable writes one row per stream and request type.
func (s *RTT) WriteTable(w io.Writer, o TableOptions) error {
	t := &table{
		Title: "rtt: round trips and request latencies (ms)",
		Cols: []column{
			{Name: "STREAM", Right: true, Drop: 2}, {Name: "PROTO", Drop: 14}, {Name: "REQUEST"},
			{Name: "COUNT", Right: true}, {Name: "MIN ms", Right: true, Drop: 11}, {Name: "MEDIAN ms", Right: true},
			{Name: "P95 ms", Right: true, Drop: 12}, {Name: "P99 ms", Right: true, Drop: 3}, {Name: "MAX ms", Right: true},
			{Name: "MEAN ms", Right: true, Drop: 13}, {Name: "UNANSWERED", Right: true, Drop: 1},
		},
	}
	approx := false
	for _, a := range s.rows() {
		stream := itoa(int64(a.key.stream))
		if a.key.stream < 0 {
			stream = "-"
		}
		q := func(p float64) string {
			if a.count == 0 {
				return "-"
			}
			v := ms(a.quantile(p))
			if a.hist != nil {
				approx = true
				return "≈" + v
			}
			return v
		}
		lo, hi, mean := "-", "-", "-"
		if a.count > 0 {
			lo, hi, mean = ms(a.min), ms(a.max), ms(a.sum/float64(a.count))
		}
		t.Add(stream, text(a.key.proto), text(a.key.request), itoa(a.count), lo, q(0.5), q(0.95), q(0.99), hi, mean,
			itoa(a.unanswered()))
	}
	if len(t.Rows) == 0 {
		t.Notes = append(t.Notes, "no ping/pong or request/reply seen")
	}
	if approx {
		t.Notes = append(t.Notes, "≈: from a histogram (within 1 %): more than 1048576 samples in all")
	}
	if s.unnamed > 0 {
		t.Notes = append(t.Notes, itoa(s.unnamed)+" requests not remembered (bound reached): replies to them are named by code")
	}
	return write(t, w, o)
}

// WriteJSON writes one row per stream and request type.
func (s *RTT) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, a := range s.rows() {
		r := newRow(s.buf, "rtt")
		r.int("stream", int64(a.key.stream))
		r.str("proto", a.key.proto)
		r.str("request", a.key.request)
		r.int("count", a.count)
		if a.count > 0 {
			r.ms("min_ms", a.min)
			r.ms("median_ms", a.quantile(0.5))
			r.ms("p95_ms", a.quantile(0.95))
			r.ms("p99_ms", a.quantile(0.99))
			r.ms("max_ms", a.max)
			r.ms("mean_ms", a.sum/float64(a.count))
		} else {
			for _, k := range []string{"min_ms", "median_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms"} {
				r.null(k)
			}
		}
		r.int("requests", a.requests)
		r.int("unanswered", a.unanswered())
		r.bool("approximate", a.hist != nil)
		r.end(bw)
		s.buf = r.b
	}
	return bw.Flush()
}
