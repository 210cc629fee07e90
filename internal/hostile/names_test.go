package main

import (
	"bytes"
	"context"
	"github.com/dissect-tools/dissect/internal/longtest"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/pipeline"
)

// generate writes what write generates as a pcap in memory.
func generate(t *testing.T, write func(g *gen)) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := capture.NewPcapWriter(&b, capture.LinkEthernet, true)
	if err != nil {
		t.Fatal(err)
	}
	g := &gen{w: w, t: time.Unix(1_700_000_000, 0)}
	write(g)
	if g.err == nil {
		g.err = w.Flush()
	}
	if g.err != nil {
		t.Fatal(g.err)
	}
	return b.Bytes()
}

// run decodes pcap with the shipped protocols: a summary-only run on
// workers goroutines when sink is nil, else every record to sink.
func run(t *testing.T, pcap []byte, sink dissect.Sink, workers int) *dissect.Summary {
	t.Helper()
	reg, err := all.Registry(all.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := capture.NewReader(bytes.NewReader(pcap), "names.pcap")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := pipeline.Run(context.Background(), src, pipeline.Config{Registry: reg, Sink: sink, CountOnly: sink == nil, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	sum.Elapsed = 0
	return sum
}

// typeCounter counts the records of a run per type.
type typeCounter map[string]int

func (c typeCounter) Record(r *dissect.Record) error { c[r.Type]++; return nil }

// TestTypenames: 3 connections × 600 type names, one message each. The
// summary's type rows stop at the cap; the names past it are folded into one "(other types)" row that counts them and their
// messages; -q on one goroutine and on two give the same summary; with a
// sink every record keeps its real type.
func TestTypenames(t *testing.T) {
	const conns, per = 3, 600
	pcap := generate(t, func(g *gen) { g.typenames(conns, per, 40) })
	serial := run(t, pcap, nil, 1)
	staged := run(t, pcap, nil, 2)
	if !reflect.DeepEqual(serial, staged) {
		t.Errorf("-q on two goroutines:\n%+v\none:\n%+v", staged.Messages, serial.Messages)
	}
	counts := typeCounter{}
	full := run(t, pcap, counts, 1)
	for _, sum := range []*dissect.Summary{serial, full} {
		rows := map[string]dissect.TypeCount{}
		real := 0
		for _, r := range sum.Messages {
			if r.Folded == 0 {
				real++
			}
			rows[r.Type] = r
		}
		// Declared types (cookie, type_description) keep their rows; the
		// wire's names fill the rest of the cap.
		if real > dissect.MaxTypeRows+2 {
			t.Errorf("%d real rows, cap %d", real, dissect.MaxTypeRows)
		}
		if rows["type_description"].Count != conns*per || rows["cookie"].Count != 2*conns {
			t.Errorf("declared rows: %+v %+v", rows["type_description"], rows["cookie"])
		}
		named := real - 2
		o := rows[dissect.OtherTypes]
		if o.Folded != int64(conns*per-named) || o.Count != o.Folded || o.FoldedAtLeast {
			t.Errorf("other types %+v, want %d types of one message each", o, conns*per-named)
		}
		if want := int64(conns*per*2 + 2*conns); sum.MessageCount() != want {
			t.Errorf("%d messages, want %d", sum.MessageCount(), want)
		}
	}
	for c := range conns {
		for id := range per {
			if n := counts[namesName(c, id, 't', 40)]; n != 1 {
				t.Fatalf("type %q written %d times, want 1", namesName(c, id, 't', 40), n)
			}
		}
	}
	if counts[dissect.OtherTypes] != 0 {
		t.Error("a record was written with the folded row's name")
	}
}

// TestVrpnnames: 10 connections held open, each naming 4,096 senders and
// 4,096 types of 200 bytes: more than the run's name budget holds. The
// names past it are refused, each connection that lost some says how many
// in a note, their messages are "unknown", and every message is counted.
func TestVrpnnames(t *testing.T) {
	longtest.Skip(t)
	const conns, per, ln = 10, 4096, 200
	pcap := generate(t, func(g *gen) { g.vrpnnames(conns, per, ln) })
	counts := typeCounter{}
	sum := run(t, pcap, counts, 1)
	fit := 16 << 20 / (ln + 64) // the vrpn budget: 16 MiB, a name costs its length + 64
	refused := 0
	re := regexp.MustCompile(`^vrpn: (\d+) names not recorded: the name tables of all connections held their bound \(16 MiB\)`)
	for _, n := range sum.Notes {
		if m := re.FindStringSubmatch(n); m != nil {
			k, _ := strconv.Atoi(m[1])
			refused += k
		}
	}
	if refused != conns*per*2-fit {
		t.Errorf("notes count %d refused names, want %d; notes:\n%s", refused, conns*per*2-fit, strings.Join(sum.Notes, "\n"))
	}
	// Names go sender, type, sender, type...: fit/2 types were named (the
	// last one maybe not), the others' messages are unknown.
	named := 0
	for typ, n := range counts {
		if strings.HasPrefix(typ, "t") && n == 1 {
			named++
		}
	}
	if named != fit/2 || counts["unknown"] != conns*per-named {
		t.Errorf("%d named types, %d unknown; want %d and %d", named, counts["unknown"], fit/2, conns*per-fit/2)
	}
	if want := int64(conns * per * 3); sum.MessageCount() != want+2*conns {
		t.Errorf("%d messages, want %d", sum.MessageCount(), want+2*conns)
	}
	found := false
	for _, w := range sum.Warnings {
		found = found || strings.Contains(w, "name not recorded: the name tables of all connections hold their bound (16 MiB)")
	}
	if !found {
		t.Errorf("warnings: %q", sum.Warnings)
	}
}
