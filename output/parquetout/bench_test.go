package parquetout

import (
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/parquet-go/parquet-go"
)

// deltaRecords returns n records shaped as the generated Deltarobot
// capture's (internal/benchgen): one type of four float32s, times and
// offsets that grow, a server address, clients in runs of about 27,
// a stream per client; and their declaration.
func deltaRecords(n int) ([]*dissect.Record, *dissect.TypeDecl) {
	d := &dissect.TypeDecl{Type: "actuator_position", Fields: []dissect.FieldDecl{
		{Name: "x", Kind: dissect.KindFloat32}, {Name: "y", Kind: dissect.KindFloat32},
		{Name: "z", Kind: dissect.KindFloat32}, {Name: "u", Kind: dissect.KindFloat32}}}
	rng := rand.New(rand.NewPCG(1, 2))
	clients := []string{"198.51.100.10:50000", "198.51.100.11:50001", "198.51.100.12:50002", "198.51.100.13:50003"}
	recs := make([]*dissect.Record, n)
	t0 := time.Unix(1700000000, 0)
	client := 0
	for i := range recs {
		if i%27 == 0 {
			client = rng.IntN(len(clients))
		}
		r := &dissect.Record{Time: t0.Add(time.Duration(i) * 117 * time.Microsecond), Frame: int64(i + 10),
			Proto: "deltarobot", Transport: dissect.TCP, Stream: client,
			Src: "192.0.2.1:4000", Dst: clients[client], Offset: int64(i) * 54, Length: 18, Type: d.Type}
		for _, k := range []string{"x", "y", "z", "u"} {
			r.Add(k, dissect.Float32(rng.Float32()*2-1))
		}
		r.Fields[3].Value = dissect.Float32(0) // u: Deltarobot's fourth axis stays at 0
		recs[i] = r
	}
	return recs, d
}

// BenchmarkBuild is the decoder's share of -o parquet: records appended
// to a row group's columns (rowBuilder.build), a row group at a time.
func BenchmarkBuild(b *testing.B) {
	recs, d := deltaRecords(1 << 14)
	pl, err := newPlan(d, false, false)
	if err != nil {
		b.Fatal(err)
	}
	bt := newBatch(pl.specs)
	rb := rowBuilder{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%len(recs) == 0 {
			bt.reset()
		}
		rb.build(bt, pl, recs[i%len(recs)], "bench.pcap")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rec/s")
}

// BenchmarkWriteRowGroup is the workers' share: a row group of the
// Deltarobot records encoded and compressed (batch.write), per record.
func BenchmarkWriteRowGroup(b *testing.B) {
	const rows = 1 << 15
	recs, d := deltaRecords(rows)
	pl, err := newPlan(d, false, false)
	if err != nil {
		b.Fatal(err)
	}
	bt := newBatch(pl.specs)
	rb := rowBuilder{}
	for _, r := range recs {
		rb.build(bt, pl, r, "bench.pcap")
	}
	codec, _ := codecOf("")
	opts := append(writerOptions("", codec), pl.file)
	pw := parquet.NewWriter(io.Discard, opts...)
	var s scratch
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N / rows {
		if err := bt.write(pw, &s); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N/rows*rows)/b.Elapsed().Seconds(), "rec/s")
}
