package capture

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"testing"
	"time"
)

// benchCompressedInput is the capture the compressed-read benchmarks read:
// the file named by $DISSECT_BENCH_PCAP (e.g. made by
// /work/shared/bench/gen_deltarvr_pcap.py --size-mb 50), or else a ~16 MB
// pcap generated in memory whose packets, like the generator's, carry
// Ethernet/IPv4/TCP headers with advancing counters and float32 vectors
// that change a little at each tick (compressible as real captures are,
// unlike a run of one byte).
func benchCompressedInput(b *testing.B) []byte {
	if path := os.Getenv("DISSECT_BENCH_PCAP"); path != "" {
		raw, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		return raw
	}
	var buf bytes.Buffer
	w, err := NewPcapWriter(&buf, LinkEthernet, false)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Unix(1795306106, 0)
	hdr := make([]byte, 54)
	copy(hdr, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00\x45")
	var data []byte
	seq := uint32(1)
	x := uint32(7)
	for i := 0; buf.Len() < 16<<20; i++ {
		data = append(data[:0], hdr...)
		binary.BigEndian.PutUint16(data[18:], uint16(i))
		binary.BigEndian.PutUint32(data[38:], seq)
		for k := range 1 + i%40 { // 1 to 40 messages of 22 bytes
			data = binary.BigEndian.AppendUint16(data, 0x4003+uint16(k%3)*4)
			data = binary.BigEndian.AppendUint32(data, 16)
			for j := range 4 {
				x ^= x << 13
				x ^= x >> 17
				x ^= x << 5
				v := float32(math.Sin(float64(i+j)/100)) + float32(x%64)/1e4
				data = binary.BigEndian.AppendUint32(data, math.Float32bits(v))
			}
		}
		seq += uint32(len(data) - 54)
		p := Packet{Time: t0.Add(time.Duration(i) * 250 * time.Microsecond), LinkType: LinkEthernet, Data: data, Length: len(data)}
		if err := w.WritePacket(&p); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// benchCompressed reads the capture compressed by compress; the MB/s
// reported are of decompressed capture, comparable with
// BenchmarkReadUncompressed.
func benchCompressed(b *testing.B, compress func(testing.TB, []byte) []byte) {
	raw := benchCompressedInput(b)
	z := raw
	if compress != nil {
		z = compress(b, raw)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	r := bytes.NewReader(z)
	for b.Loop() {
		r.Reset(z)
		src, err := NewReader(r, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if _, size := readCount(b, src); size == 0 {
			b.Fatal("no packets")
		}
		src.Close()
	}
	b.ReportMetric(float64(len(z))/float64(len(raw)), "ratio")
}

func BenchmarkReadUncompressed(b *testing.B) { benchCompressed(b, nil) }
func BenchmarkReadGzip(b *testing.B)         { benchCompressed(b, gzipStd) }
func BenchmarkReadZstd(b *testing.B)         { benchCompressed(b, zstdLib) }
func BenchmarkReadLZ4(b *testing.B)          { benchCompressed(b, lz4Lib()) }
