package capture

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchPackets returns packets of a realistic size mix (60 to 1514 bytes,
// mean ~570) totalling about 10 MB.
func benchPackets() []Packet {
	sizes := []int{60, 66, 1514, 590, 120, 1514, 74, 300}
	data := bytes.Repeat([]byte{0x5a}, 1514)
	var ps []Packet
	t0 := time.Unix(1795306106, 0)
	for total, i := 0, 0; total < 10<<20; i++ {
		n := sizes[i%len(sizes)]
		ps = append(ps, Packet{
			Time:      t0.Add(time.Duration(i) * time.Microsecond),
			LinkType:  LinkEthernet,
			Direction: Direction(i % 3),
			Data:      data[:n],
			Length:    n,
		})
		total += n
	}
	return ps
}

func benchPcap(b *testing.B) []byte {
	var buf bytes.Buffer
	w, err := NewPcapWriter(&buf, LinkEthernet, false)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range benchPackets() {
		p.Direction = DirUnknown
		if err := w.WritePacket(&p); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchPcapng(b *testing.B) []byte {
	var buf bytes.Buffer
	w, err := NewPcapngWriter(&buf)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.AddInterface("eth0", LinkEthernet, 0); err != nil {
		b.Fatal(err)
	}
	for _, p := range benchPackets() {
		if err := w.WritePacket(&p); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// readCount reads src to the end and returns the packets and bytes seen.
func readCount(b *testing.B, src Source) (n, size int) {
	for {
		p, err := src.Next()
		if err == io.EOF {
			return n, size
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
		size += len(p.Data)
	}
}

func benchReader(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	r := bytes.NewReader(data)
	for b.Loop() {
		r.Reset(data)
		src, err := NewReader(r, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if n, _ := readCount(b, src); n == 0 {
			b.Fatal("no packets")
		}
	}
}

// BenchmarkPcapReader reads a ~10 MB in-memory pcap.
func BenchmarkPcapReader(b *testing.B) { benchReader(b, benchPcap(b)) }

// BenchmarkPcapngReader reads a ~10 MB in-memory pcapng (EPBs, two in
// three with epb_flags).
func BenchmarkPcapngReader(b *testing.B) { benchReader(b, benchPcapng(b)) }

// BenchmarkOpenFilePcapng reads the same pcapng from a file, system calls
// included.
func BenchmarkOpenFilePcapng(b *testing.B) {
	data := benchPcapng(b)
	path := filepath.Join(b.TempDir(), "bench.pcapng")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		src, err := OpenFile(path)
		if err != nil {
			b.Fatal(err)
		}
		readCount(b, src)
		src.Close()
	}
}

// BenchmarkPcapngWriter writes the ~10 MB of packets as pcapng.
func BenchmarkPcapngWriter(b *testing.B) {
	ps := benchPackets()
	size := len(benchPcapng(b))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		w, _ := NewPcapngWriter(io.Discard)
		w.AddInterface("eth0", LinkEthernet, 0)
		for i := range ps {
			if err := w.WritePacket(&ps[i]); err != nil {
				b.Fatal(err)
			}
		}
		w.Flush()
	}
}
