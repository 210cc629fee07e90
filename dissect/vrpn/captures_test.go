package vrpn

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/pipeline"
)

// runCapture decodes a capture of testdata through the whole pipeline
// (capture, reassembly, dissect.Stream, this package) with a registry
// holding only VRPN.
func runCapture(t *testing.T, file string, decode bool) []*dissect.Record {
	t.Helper()
	reg, _ := registry(t)
	col := &dissecttest.Collector{}
	src := pipeline.NewFiles([]string{filepath.Join("testdata", file)}, nil)
	defer src.Close()
	if _, err := pipeline.Run(context.Background(), src, pipeline.Config{Registry: reg, Sink: col, TypesOnly: !decode}); err != nil {
		t.Fatalf("Run(%s): %v", file, err)
	}
	return col.Records
}

type flowKey struct{ transport, from, to string }

// TestCaptures checks every real capture against truth.json: per direction
// and transport, the (sender, type) counts, the cookies, the sequence
// numbers, the lob datagrams, exact byte accounting of every TCP direction
// and the decoded values of every decoded_examples message.
func TestCaptures(t *testing.T) {
	tf := loadTruth(t)
	for _, file := range []string{
		"a_tcp_only.pcap", "b_udp_tcp.pcap", "b_udp_tcp.pcapng",
		"c2_multi_device_analog.pcap", "c3_multi_device_truth.pcap", "e2_client_clean_disconnect.pcap",
	} {
		t.Run(file, func(t *testing.T) {
			c := tf.Captures[file]
			if c == nil {
				t.Fatalf("%s not in truth.json", file)
			}
			if c.SameAs != "" {
				c = tf.Captures[c.SameAs]
			}
			recs := runCapture(t, file, true)
			checkCapture(t, c, recs)

			// A types-only run frames the same records with the same types.
			lite := runCapture(t, file, false)
			if len(lite) != len(recs) {
				t.Fatalf("Decode false: %d records, Decode true: %d", len(lite), len(recs))
			}
			for i := range recs {
				a, b := recs[i], lite[i]
				if a.Type != b.Type || a.Src != b.Src || a.Offset != b.Offset || a.Length != b.Length || len(b.Fields) != 0 {
					t.Fatalf("record %d: Decode true %s %s@%d+%d, Decode false %s %s@%d+%d with %d fields", i, a.Type, a.Src, a.Offset, a.Length, b.Type, b.Src, b.Offset, b.Length, len(b.Fields))
				}
			}
		})
	}
}

func checkCapture(t *testing.T, c *truthCapture, recs []*dissect.Record) {
	t.Helper()
	groups := map[flowKey][]*dissect.Record{}
	for _, r := range recs {
		if r.Proto != "vrpn" || len(r.Warnings) != 0 || r.Type == dissect.TypeSkipped || r.Type == dissect.TypeGap {
			t.Errorf("%s %s->%s @%d: proto %q type %q warnings %q fields %v", r.Transport, r.Src, r.Dst, r.Offset, r.Proto, r.Type, r.Warnings, r.Fields)
		}
		k := flowKey{r.Transport.String(), r.Src, r.Dst}
		groups[k] = append(groups[k], r)
	}
	seen := map[flowKey]bool{}

	// TCP directions: cookie first, exact tiling, sequence numbers.
	for _, conn := range c.TCP {
		for _, d := range conn.Directions {
			k := flowKey{"tcp", d.From, d.To}
			seen[k] = true
			g := groups[k]
			checkTiling(t, "tcp "+d.From+"->"+d.To, g, d.PayloadBytes)
			if len(g) == 0 || g[0].Type != TypeCookie {
				t.Errorf("%s->%s: first record is not the cookie", d.From, d.To)
				continue
			}
			v, _ := g[0].Fields.Get("version")
			m, _ := g[0].Fields.Get("log_mode")
			if !strings.HasPrefix(d.Cookie.Text, "vrpn: ver. "+v.Str()) || fmt.Sprint(m.Int()) != d.Cookie.LogModeDigit {
				t.Errorf("%s->%s: cookie %q mode %d, truth %q", d.From, d.To, v.Str(), m.Int(), d.Cookie.Text)
			}
			if g[0].Length != 24 {
				t.Errorf("%s->%s: cookie record of %d bytes", d.From, d.To, g[0].Length)
			}
			checkSequence(t, "tcp "+d.From+"->"+d.To, g[1:], d.FramedMessages, d.Seq)
		}
	}
	// UDP message flows.
	for _, f := range c.UDPFlows {
		k := flowKey{"udp", f.From, f.To}
		seen[k] = true
		g := groups[k]
		var off int64
		for _, r := range g {
			if r.Offset != off {
				t.Errorf("udp %s->%s: record at %d, want %d", f.From, f.To, r.Offset, off)
			}
			off += r.Length
		}
		checkSequence(t, "udp "+f.From+"->"+f.To, g, f.FramedMessages, f.Seq)
	}
	// Lob datagrams: one udp_callback record each.
	for _, l := range c.Lobs {
		k := flowKey{"udp", l.Src, l.Dst}
		seen[k] = true
		g := groups[k]
		if len(g) != 1 {
			t.Errorf("lob %s->%s: %d records", l.Src, l.Dst, len(g))
			continue
		}
		host, _ := g[0].Fields.Get("host")
		port, _ := g[0].Fields.Get("port")
		if g[0].Type != TypeUDPCallback || host.Str() != l.CallbackIP || port.Int() != int64(l.CallbackPort) || g[0].Length != int64(l.Len) {
			t.Errorf("lob %s->%s: %s %s:%d (%d bytes), want udp_callback %s:%d (%d)", l.Src, l.Dst, g[0].Type, host.Str(), port.Int(), g[0].Length, l.CallbackIP, l.CallbackPort, l.Len)
		}
	}
	for k, g := range groups {
		if !seen[k] {
			t.Errorf("%d records on %v, which truth does not list", len(g), k)
		}
	}

	// Counts per (transport, from, to, sender, type).
	type countKey struct{ transport, from, to, sender, typ string }
	got := map[countKey]int{}
	for _, r := range recs {
		if r.Type == TypeCookie || r.Type == TypeUDPCallback {
			continue
		}
		s, typ := recordKey(r)
		got[countKey{r.Transport.String(), r.Src, r.Dst, s, typ}]++
	}
	want := map[countKey]int{}
	for _, row := range c.Expected.Rows {
		if len(row) != 7 {
			t.Fatalf("expected_counts row %v", row)
		}
		k := countKey{row[0].(string), row[2].(string), row[3].(string), row[4].(string), row[5].(string)}
		want[k] += int(row[6].(float64))
	}
	if len(want) == 0 {
		t.Fatal("no expected counts")
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("count %v = %d, want %d", k, got[k], n)
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("count %v = %d, not in truth", k, n)
		}
	}

	// Decoded examples, matched by header time and sequence number.
	type exKey struct {
		transport, from, to string
		sec, usec           int64
		seq                 uint64
	}
	byKey := map[exKey]*dissect.Record{}
	for _, r := range recs {
		sent, ok1 := r.Fields.Get("sent")
		seq, ok2 := r.Fields.Get("sequence")
		if !ok1 || !ok2 {
			continue
		}
		ts := sent.Time()
		byKey[exKey{r.Transport.String(), r.Src, r.Dst, ts.Unix(), int64(ts.Nanosecond() / 1000), seq.Uint()}] = r
	}
	for _, m := range c.Examples {
		r := byKey[exKey{m.Transport, m.From, m.To, int64(m.Header.Sec), int64(m.Header.Usec), uint64(m.Header.Seq)}]
		if r == nil {
			t.Errorf("example frame %d %s->%s seq %d not found", m.Frame, m.From, m.To, m.Header.Seq)
			continue
		}
		checkRecord(t, r, m)
	}
	if len(c.Examples) == 0 {
		t.Error("no decoded examples")
	}
}

// checkSequence checks that the framed messages of one direction or flow
// number 0, 1, 2, ... and match truth's count and range.
func checkSequence(t *testing.T, what string, g []*dissect.Record, count int, rng [2]uint64) {
	t.Helper()
	if len(g) != count {
		t.Errorf("%s: %d framed messages, want %d", what, len(g), count)
	}
	for i, r := range g {
		seq, ok := r.Fields.Get("sequence")
		if !ok || seq.Uint() != rng[0]+uint64(i) {
			t.Errorf("%s: message %d (%s) has sequence %d, want %d", what, i, r.Type, seq.Uint(), rng[0]+uint64(i))
			return
		}
	}
	if len(g) > 0 {
		last, _ := g[len(g)-1].Fields.Get("sequence")
		if last.Uint() != rng[1] {
			t.Errorf("%s: last sequence %d, want %d", what, last.Uint(), rng[1])
		}
	}
}
