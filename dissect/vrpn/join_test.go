package vrpn

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/dissect-tools/dissect/internal/longtest"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/pipeline"
)

// This file checks resynchronisation on real joins: a capture started
// inside a connection is the connection's byte stream cut at some offset
// k. For every k of every session, in several segmentations, decoding the
// cut stream must invent nothing (every message record is a message of
// the uncut stream, at its offset with its length, hence its header and
// body; its sent time and sequence number are compared too) and lose
// nothing after the join settles (every message starting at or after the
// second message boundary at or past k is decoded), the records must
// tile the cut stream, and the result must not depend on the
// segmentation. The sessions are the mainline captures of testdata and
// pcaps/vrpn (each TCP direction, from its cookie) and sessions built here
// with Text and Poser messages.

// joinSession is one direction of a real session: its bytes from the
// start of the connection.
type joinSession struct {
	name string
	data []byte
}

// captureSessions returns the TCP directions of the mainline captures of
// testdata, rebuilt from the records of a pipeline run with Raw (which
// tile each direction).
func captureSessions(t *testing.T) []joinSession {
	t.Helper()
	var out []joinSession
	files := []string{"a_tcp_only.pcap", "b_udp_tcp.pcap", "c2_multi_device_analog.pcap", "c3_multi_device_truth.pcap", "e2_client_clean_disconnect.pcap"}
	// The repository's real mainline captures (pcaps/vrpn/README.md):
	// every message kind of the catalogue, a 30-round session of Text and
	// Poser messages included.
	shipped, _ := filepath.Glob(filepath.Join("..", "..", "pcaps", "vrpn", "*.pcap"))
	if len(shipped) == 0 {
		t.Fatal("no capture in pcaps/vrpn")
	}
	for _, f := range shipped {
		files = append(files, filepath.Join("..", f)) // from testdata
	}
	for _, file := range files {
		reg, _ := registry(t)
		col := &dissecttest.Collector{}
		src := pipeline.NewFiles([]string{filepath.Join("testdata", file)}, nil)
		_, err := pipeline.Run(context.Background(), src, pipeline.Config{Registry: reg, Sink: col, Raw: true})
		src.Close()
		if err != nil {
			t.Fatalf("Run(%s): %v", file, err)
		}
		type key struct {
			stream int
			src    string
		}
		dirs := map[key][]byte{}
		var order []key
		for _, r := range col.Records {
			if r.Transport != dissect.TCP {
				continue
			}
			k := key{r.Stream, r.Src}
			if _, ok := dirs[k]; !ok {
				order = append(order, k)
			}
			if int64(len(dirs[k])) != r.Offset || int64(len(r.Raw)) != r.Length {
				t.Fatalf("%s %v: record at %d+%d (%d raw bytes) after %d bytes", file, k, r.Offset, r.Length, len(r.Raw), len(dirs[k]))
			}
			dirs[k] = append(dirs[k], r.Raw...)
		}
		for _, k := range order {
			out = append(out, joinSession{fmt.Sprintf("%s/%d/%s", file, k.stream, k.src), dirs[k]})
		}
	}
	return out
}

// sessionBuilder writes one direction of a mainline session: the cookie,
// descriptions, then messages with times 10 ms apart and sequence numbers
// from 0 (README facts 1-6).
type sessionBuilder struct {
	b    []byte
	seq  uint32
	usec int64 // microseconds since 1795306100 s
}

func (s *sessionBuilder) msg(sender, typ int32, body []byte) {
	t := 1795306100*1000000 + s.usec
	s.b = append(s.b, encMsg(uint32(t/1000000), uint32(t%1000000), sender, typ, s.seq, body)...)
	s.seq++
	s.usec += 10000
}

func (s *sessionBuilder) describe(typ, id int32, name string) {
	body := binary.BigEndian.AppendUint32(nil, uint32(len(name)+1))
	body = append(body, name...)
	s.msg(id, typ, append(body, 0))
}

func appendF64(b []byte, v ...float64) []byte {
	for _, x := range v {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// builtSession returns a session with what the captures lack: Text
// messages (1032-byte bodies: u32 severity, u32 level, the text and its
// NUL, then zeros or stale bytes of earlier bodies, as vrpn_BaseClass's
// stack buffer holds) and Poser requests (7 doubles: position, then the
// quaternion x, y, z, w; vrpn_Poser::encode_to), among tracker reports
// and pings, with positions whose doubles hold headers (-3.5 after 0.0
// reads as the length 49164 the issue saw).
func builtSession(seed uint64, stale bool) []byte {
	rng := rand.New(rand.NewPCG(seed, 22))
	s := &sessionBuilder{b: []byte(testCookie)}
	for i, name := range []string{"VRPN Control", "Tracker0", "Poser0"} {
		s.describe(sysSenderDescription, int32(i), name)
	}
	for i, name := range []string{"VRPN_Connection_Got_First_Connection", "VRPN_Connection_Got_Connection",
		"VRPN_Connection_Dropped_Connection", "VRPN_Connection_Dropped_Last_Connection",
		"vrpn_Base ping_message", "vrpn_Base pong_message", "vrpn_Base text_message",
		namePosQuat, "vrpn_Poser Request Pos_Quat", "vrpn_Poser Request Pos_Quat_Relative"} {
		s.describe(sysTypeDescription, int32(i), name)
	}
	var lastBody []byte
	texts := []string{"vrpn_Tracker_NULL: sensor 1 out of range", "Poser0: request out of workspace", "x", "connection dropped; retrying"}
	for i := range 60 {
		switch rng.IntN(6) {
		case 0: // Text: severity, level, text, NUL, then the rest of 1032
			body := binary.BigEndian.AppendUint32(nil, uint32(rng.IntN(3)))
			body = binary.BigEndian.AppendUint32(body, uint32(rng.IntN(2)))
			body = append(body, texts[rng.IntN(len(texts))]...)
			body = append(body, 0)
			for len(body) < 1032 {
				switch {
				case !stale:
					body = append(body, 0)
				case rng.IntN(3) == 0 && len(lastBody) > 0:
					body = append(body, lastBody[:min(len(lastBody), 1032-len(body))]...)
				case rng.IntN(2) == 0:
					body = append(body, make([]byte, min(rng.IntN(64), 1032-len(body)))...)
				default:
					body = append(body, byte(rng.Uint32()))
				}
			}
			s.msg(int32(1+rng.IntN(2)), 6, body)
			lastBody = body[:8+rng.IntN(32)]
		case 1, 2: // Poser request: absolute or relative
			pos := []float64{0, -3.5, 0}
			if rng.IntN(2) == 0 {
				pos = []float64{rng.Float64(), 0, -3.5}
			}
			body := appendF64(nil, pos...)
			body = appendF64(body, 0, 0, 0, 1)
			s.msg(2, int32(8+rng.IntN(2)), body)
			lastBody = body
		case 3:
			s.msg(1, 4, nil) // ping
		default: // Pos_Quat: sensor, its copy, position, quaternion
			body := binary.BigEndian.AppendUint32(nil, uint32(i%2))
			body = binary.BigEndian.AppendUint32(body, uint32(i%2))
			body = appendF64(body, rng.Float64(), 0, -3.5, 0, 0, 0, 1)
			s.msg(1, 7, body)
			lastBody = body
		}
	}
	return s.b
}

// joinTail is how far past the second boundary a cut stream is decoded
// (to the next boundary): more than a run of three of the sessions'
// longest messages (Text, 1056 bytes).
const joinTail = 4096

// joinRecord is a record of a cut stream, as compared across segmentations.
type joinRecord struct {
	typ          string
	off, n       int64
	sent         time.Time
	seq          uint64
	hasSent, raw bool
}

// joinRecordOf keeps what the join tests compare of r.
func joinRecordOf(r *dissect.Record) joinRecord {
	jr := joinRecord{typ: r.Type, off: r.Offset, n: r.Length}
	if v, ok := r.Fields.Get("sent"); ok {
		jr.sent, jr.hasSent = v.Time(), true
	}
	if v, ok := r.Fields.Get("sequence"); ok {
		jr.seq = v.Uint()
	}
	return jr
}

// decodeJoin decodes data as one TCP direction fed in the given segments
// (cuts are the lengths, cycled) and returns its records. The registry
// may be shared: its VRPN state only routes UDP flows.
func decodeJoin(t *testing.T, reg *dissect.Registry, data []byte, cuts []int) []joinRecord {
	t.Helper()
	var out []joinRecord
	sink := dissect.SinkFunc(func(r *dissect.Record) error {
		out = append(out, joinRecordOf(r))
		return nil
	})
	st := dissect.NewStream(newTCP(t).info, reg, sink, dissect.StreamOptions{Decode: true})
	t0 := time.Unix(1795306127, 0)
	for i, c := 0, 0; i < len(data); c++ {
		n := len(data) - i
		if len(cuts) > 0 {
			n = min(cuts[c%len(cuts)], n)
		}
		st.Data(0, t0, data[i:i+n])
		i += n
	}
	st.End(0, t0)
	return out
}

// checkJoins cuts the session at every offset and checks the properties
// at the top of the file; it returns how many offsets it tried.
func checkJoins(t *testing.T, sess joinSession, segmentations [][]int, every int) int {
	t.Helper()
	reg, _ := registry(t)
	whole := decodeJoin(t, reg, sess.data, nil)
	var starts []int64 // true message boundaries
	truth := map[int64]joinRecord{}
	var off int64
	for _, r := range whole {
		if r.off != off || r.typ == dissect.TypeSkipped || r.typ == dissect.TypeGap {
			t.Fatalf("%s: uncut stream gives %s at %d+%d (want offset %d)", sess.name, r.typ, r.off, r.n, off)
		}
		off += r.n
		starts = append(starts, r.off)
		truth[r.off] = r
	}
	if off != int64(len(sess.data)) {
		t.Fatalf("%s: uncut records cover %d of %d bytes", sess.name, off, len(sess.data))
	}
	tried := 0
	fails := 0
	for k := 1; k < len(sess.data) && fails < 5; k += every {
		tried++
		// b2: the second boundary at or past k.
		j, _ := slices.BinarySearch(starts, int64(k))
		b2 := int64(len(sess.data))
		if j+1 < len(starts) {
			b2 = starts[j+1]
		}
		// The cut stream ends at the first boundary joinTail bytes past b2
		// (or at the session's end): the join is settled by then, and
		// what follows is plain framing, the same for every k.
		end := len(sess.data)
		if e, _ := slices.BinarySearch(starts, b2+joinTail); e < len(starts) {
			end = int(starts[e])
		}
		cut := sess.data[k:end]
		var first []joinRecord
		for si, seg := range segmentations {
			got := decodeJoin(t, reg, cut, seg)
			if si == 0 {
				first = got
				fails += checkJoin(t, sess, k, b2, starts, truth, got, end)
				continue
			}
			if !slices.Equal(got, first) {
				fails++
				t.Errorf("%s cut at %d: segments %v give %s; whole: %s", sess.name, k, seg, describeJoin(got), describeJoin(first))
			}
		}
	}
	return tried
}

// checkJoin checks one cut stream's records; it returns 1 on a failure.
func checkJoin(t *testing.T, sess joinSession, k int, b2 int64, starts []int64, truth map[int64]joinRecord, got []joinRecord, end int) int {
	t.Helper()
	var off int64
	decoded := map[int64]bool{}
	for _, r := range got {
		if r.off != off || r.n <= 0 {
			t.Errorf("%s cut at %d: record %s at %d+%d, want offset %d: %s", sess.name, k, r.typ, r.off, r.n, off, describeJoin(got))
			return 1
		}
		off += r.n
		if r.typ == dissect.TypeSkipped || r.typ == dissect.TypeGap {
			continue
		}
		w, ok := truth[int64(k)+r.off]
		if !ok || w.n != r.n || !r.hasSent || !w.sent.Equal(r.sent) || w.seq != r.seq {
			t.Errorf("%s cut at %d: invented %s at %d+%d (sent %v seq %d): %s", sess.name, k, r.typ, int64(k)+r.off, r.n, r.sent.UTC(), r.seq, describeJoin(got))
			return 1
		}
		decoded[int64(k)+r.off] = true
	}
	if off != int64(end-k) {
		t.Errorf("%s cut at %d: records cover %d of %d bytes", sess.name, k, off, end-k)
		return 1
	}
	for _, s := range starts {
		if s >= b2 && s < int64(end) && !decoded[s] {
			t.Errorf("%s cut at %d: message at %d (%s, second boundary %d) not decoded: %s", sess.name, k, s, truth[s].typ, b2, describeJoin(got))
			return 1
		}
	}
	return 0
}

func describeJoin(rs []joinRecord) string {
	s := ""
	for i, r := range rs {
		if i == 12 {
			return s + fmt.Sprintf(" ... (%d records)", len(rs))
		}
		s += fmt.Sprintf(" %s@%d+%d", r.typ, r.off, r.n)
	}
	return s
}

// TestJoinEveryOffset: every start offset of every session, in one
// segment, invents nothing and decodes every message from the second
// boundary on; every 7th offset gives the same records in 7- and 100-byte
// segments and in mixed ones, every 31st in 1-byte segments. Without
// DISSECT_LONG, two sessions and every 5th of those offsets.
func TestJoinEveryOffset(t *testing.T) {
	sessions := captureSessions(t)
	for seed := range uint64(3) {
		sessions = append(sessions,
			joinSession{fmt.Sprintf("built/zeros/%d", seed), builtSession(seed, false)},
			joinSession{fmt.Sprintf("built/stale/%d", seed), builtSession(seed, true)})
	}
	step := 1 // DISSECT_LONG: every offset of every session
	if !longtest.On() {
		sessions, step = sessions[:2], 5
	}
	for _, sess := range sessions {
		t.Run(sess.name, func(t *testing.T) {
			n := checkJoins(t, sess, [][]int{nil}, step)
			checkJoins(t, sess, [][]int{nil, {7}, {100}, {3, 50, 1, 600, 24}}, 7*step)
			checkJoins(t, sess, [][]int{nil, {1}}, 31*step)
			t.Logf("%d bytes, %d offsets", len(sess.data), n)
		})
	}
}

// TestJoinIssueCases: the two joins issue 22 reports, built: a cut inside
// a Text message whose zero padding and the next header read as a header,
// and a cut inside a Poser request whose doubles read as a header of
// length 49164 (then the rest of the stream, 7 messages, is short of it).
func TestJoinIssueCases(t *testing.T) {
	s := &sessionBuilder{}
	text := binary.BigEndian.AppendUint32(nil, 2)
	text = binary.BigEndian.AppendUint32(text, 0)
	text = append(text, "vrpn_Poser_Server: request out of bounds\x00"...)
	text = append(text, make([]byte, 1032-len(text))...)
	s.msg(1, 6, text)
	poser := appendF64(nil, 0, -3.5, 0, 0, 0, 0, 1)
	s.msg(2, 8, poser)
	for range 7 {
		s.msg(1, 4, nil)
	}
	if got := binary.BigEndian.Uint32(s.b[1056+24+6:]); got != 49164 {
		t.Fatalf("the Poser request's doubles read %d, not 49164, as a length", got)
	}
	checkJoins(t, joinSession{"issue", s.b}, [][]int{nil, {1}, {8}}, 1)
}

// TestGapEveryOffset: a gap of n bytes at offset k of a session (every
// 5th k, a few n) loses only what it must: every message that ends before
// the gap, and every message from the second boundary at or past its end,
// is decoded as in the uncut stream (same type, or unknown when its
// description fell in the gap), and nothing is invented. After the gap the
// direction's phase is known from its cookie and its names and times are
// known: the search uses them.
func TestGapEveryOffset(t *testing.T) {
	sessions := captureSessions(t)
	sessions = append(sessions, joinSession{"built/stale/0", builtSession(0, true)})
	for _, sess := range sessions {
		t.Run(sess.name, func(t *testing.T) {
			reg, _ := registry(t)
			whole := decodeJoin(t, reg, sess.data, nil)
			truth := map[int64]joinRecord{}
			var starts []int64
			for _, r := range whole {
				truth[r.off] = r
				starts = append(starts, r.off)
			}
			fails, step := 0, 5
			if !longtest.On() {
				step = 25
			}
			for k := 24; k < len(sess.data) && fails < 5; k += step {
				n := []int{1, 13, 100, 1500}[k%4]
				if k+n >= len(sess.data) {
					continue
				}
				j, _ := slices.BinarySearch(starts, int64(k+n))
				b2 := int64(len(sess.data))
				if j+1 < len(starts) {
					b2 = starts[j+1]
				}
				end := len(sess.data)
				if e, _ := slices.BinarySearch(starts, b2+joinTail); e < len(starts) {
					end = int(starts[e])
				}
				var got []joinRecord
				sink := dissect.SinkFunc(func(r *dissect.Record) error {
					got = append(got, joinRecordOf(r))
					return nil
				})
				st := dissect.NewStream(newTCP(t).info, reg, sink, dissect.StreamOptions{Decode: true})
				t0 := time.Unix(1795306127, 0)
				st.Data(0, t0, sess.data[:k])
				st.Gap(0, t0, int64(n))
				st.Data(0, t0, sess.data[k+n:end])
				st.End(0, t0)
				var off int64
				decoded := map[int64]bool{}
				for _, r := range got {
					if r.off != off {
						t.Errorf("%s gap %d+%d: record %s at %d, want %d: %s", sess.name, k, n, r.typ, r.off, off, describeJoin(got))
						fails++
						break
					}
					off += r.n
					if r.typ == dissect.TypeSkipped || r.typ == dissect.TypeGap {
						continue
					}
					w, ok := truth[r.off]
					if !ok || w.n != r.n || (w.typ != r.typ && r.typ != TypeUnknown) || !w.sent.Equal(r.sent) || w.seq != r.seq {
						t.Errorf("%s gap %d+%d: invented %s at %d+%d: %s", sess.name, k, n, r.typ, r.off, r.n, describeJoin(got))
						fails++
						break
					}
					decoded[r.off] = true
				}
				for _, s := range starts {
					if (s+truth[s].n <= int64(k) || s >= b2 && s < int64(end)) && !decoded[s] {
						t.Errorf("%s gap %d+%d: message at %d (%s) not decoded: %s", sess.name, k, n, s, truth[s].typ, describeJoin(got))
						fails++
						break
					}
				}
			}
		})
	}
}

// FuzzJoin: any bytes, as a TCP direction joined late (no cookie), give
// the same records however they are segmented, and the records tile them.
// Seeds: built sessions cut inside a Text message and inside a Poser
// request.
func FuzzJoin(f *testing.F) {
	for seed := range uint64(2) {
		s := builtSession(seed, seed == 1)
		f.Add(s[500:min(len(s), 4000)], []byte{7, 100, 1})
		f.Add(s[1061:min(len(s), 3000)], []byte{1})
	}
	f.Fuzz(func(t *testing.T, data, segs []byte) {
		if len(data) > 1<<15 || len(data) == 0 {
			return
		}
		cuts := make([]int, 0, len(segs))
		for _, c := range segs {
			cuts = append(cuts, 1+int(c))
		}
		reg, _ := registry(t)
		whole := decodeJoin(t, reg, data, nil)
		var off int64
		for _, r := range whole {
			if r.off != off || r.n <= 0 {
				t.Fatalf("record %s at %d+%d, want offset %d", r.typ, r.off, r.n, off)
			}
			off += r.n
		}
		if off != int64(len(data)) {
			t.Fatalf("records cover %d of %d bytes", off, len(data))
		}
		if got := decodeJoin(t, reg, data, cuts); !slices.Equal(got, whole) {
			t.Fatalf("segments %v give %s; whole: %s", cuts, describeJoin(got), describeJoin(whole))
		}
	})
}

// TestJoinedAtTheCookie: a direction joined mid-way (dissect.Stream.Joined:
// no SYN was captured) whose first byte is its cookie, as when a capture
// missed only the handshake, is decoded as if its start had been seen:
// the cookie is a boundary to the resync. Cut one byte later, the cookie
// is skipped and the resync decodes the messages after it.
func TestJoinedAtTheCookie(t *testing.T) {
	sess := builtSession(0, false)
	reg, _ := registry(t)
	whole := decodeJoin(t, reg, sess, nil)
	for _, cut := range []int{0, 1} {
		for _, seg := range [][]int{nil, {1}, {7}} {
			var got []joinRecord
			sink := dissect.SinkFunc(func(r *dissect.Record) error {
				got = append(got, joinRecordOf(r))
				return nil
			})
			st := dissect.NewStream(newTCP(t).info, reg, sink, dissect.StreamOptions{Decode: true})
			st.Joined(0)
			t0 := time.Unix(1795306127, 0)
			data := sess[cut:]
			for i, c := 0, 0; i < len(data); c++ {
				n := len(data) - i
				if len(seg) > 0 {
					n = min(seg[c%len(seg)], n)
				}
				st.Data(0, t0, data[i:i+n])
				i += n
			}
			st.End(0, t0)
			want := whole
			if cut == 1 {
				// The cookie's rest is skipped; every message after it
				// is decoded (offsets one less).
				want = []joinRecord{{typ: dissect.TypeSkipped, off: 0, n: cookieLen - 1}}
				for _, r := range whole[1:] {
					r.off--
					want = append(want, r)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("cut %d, segments %v: %s, want %s", cut, seg, describeJoin(got), describeJoin(want))
			}
		}
	}
}
