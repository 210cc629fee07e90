package capture

// Side-by-side benchmarks of our readers and writer against
// github.com/gopacket/gopacket/pcapgo on the same bytes (docs/performance-4-13.md).
// Run interleaved, e.g.:
//
//	go test -c -o /tmp/capture.test ./capture/
//	for i in 1 2 3 4 5; do /tmp/capture.test -test.run '^$' -test.bench 'VsPcapgo' -test.benchmem; done

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// smallPackets returns n Ethernet-sized small packets (60 to 90 bytes),
// directions cycling through unknown, inbound and outbound.
func smallPackets(n int) []Packet {
	data := bytes.Repeat([]byte{0x5a}, 90)
	ps := make([]Packet, n)
	t0 := time.Unix(1795306106, 0)
	for i := range ps {
		sz := 60 + i%31
		ps[i] = Packet{Time: t0.Add(time.Duration(i) * time.Microsecond), LinkType: LinkEthernet,
			Direction: Direction(i % 3), Data: data[:sz], Length: sz}
	}
	return ps
}

// genCaptures writes ~100k small packets as pcap and as pcapng.
func genCaptures(b *testing.B) (pcap, ng []byte) {
	ps := smallPackets(100_000)
	var pb, nb bytes.Buffer
	pw, _ := NewPcapWriter(&pb, LinkEthernet, false)
	nw, _ := NewPcapngWriter(&nb)
	nw.AddInterface("eth0", LinkEthernet, 0)
	for i := range ps {
		if err := nw.WritePacket(&ps[i]); err != nil {
			b.Fatal(err)
		}
		ps[i].Direction = DirUnknown
		if err := pw.WritePacket(&ps[i]); err != nil {
			b.Fatal(err)
		}
	}
	if err := pw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := nw.Flush(); err != nil {
		b.Fatal(err)
	}
	return pb.Bytes(), nb.Bytes()
}

type benchInput struct {
	name string
	data []byte
}

// benchInputs are the generated capture of the given kind and every file
// of that kind in pcaps/.
func benchInputs(b *testing.B, ng bool) []benchInput {
	gp, gn := genCaptures(b)
	in := []benchInput{{"gen100k", gp}}
	ext := ".pcap"
	if ng {
		in[0].data, ext = gn, ".pcapng"
	}
	files, _ := filepath.Glob(filepath.Join("..", "pcaps", "*"+ext))
	if len(files) == 0 {
		b.Fatalf("no ../pcaps/*%s", ext)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		in = append(in, benchInput{strings.TrimSuffix(filepath.Base(f), ext), data})
	}
	return in
}

func benchOurs(b *testing.B, data []byte) {
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

// zeroCopyReader is what pcapgo's Reader and NgReader have in common.
type zeroCopyReader interface {
	ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
}

func benchPcapgo(b *testing.B, data []byte, open func(io.Reader) (zeroCopyReader, error)) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	r := bytes.NewReader(data)
	for b.Loop() {
		r.Reset(data)
		src, err := open(r)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, _, err := src.ZeroCopyReadPacketData()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n == 0 {
			b.Fatal("no packets")
		}
	}
}

// BenchmarkVsPcapgoReadPcap: our pcap reader and pcapgo.Reader
// (ZeroCopyReadPacketData) on the same in-memory bytes.
func BenchmarkVsPcapgoReadPcap(b *testing.B) {
	open := func(r io.Reader) (zeroCopyReader, error) { return pcapgo.NewReader(r) }
	for _, in := range benchInputs(b, false) {
		b.Run(in.name+"/ours", func(b *testing.B) { benchOurs(b, in.data) })
		b.Run(in.name+"/pcapgo", func(b *testing.B) { benchPcapgo(b, in.data, open) })
	}
}

// BenchmarkVsPcapgoReadPcapng: our pcapng reader and pcapgo.NgReader
// (ZeroCopyReadPacketData, all link types) on the same in-memory bytes.
// The generated capture has epb_flags on two packets in three.
func BenchmarkVsPcapgoReadPcapng(b *testing.B) {
	open := func(r io.Reader) (zeroCopyReader, error) {
		return pcapgo.NewNgReader(r, pcapgo.NgReaderOptions{WantMixedLinkType: true})
	}
	for _, in := range benchInputs(b, true) {
		b.Run(in.name+"/ours", func(b *testing.B) { benchOurs(b, in.data) })
		b.Run(in.name+"/pcapgo", func(b *testing.B) { benchPcapgo(b, in.data, open) })
	}
}

// BenchmarkVsPcapgoWrite: one Enhanced Packet Block with epb_flags per
// iteration (ns/op is ns/packet), PcapngWriter against pcapgo.NgWriter,
// both writing to io.Discard through their own buffers.
func BenchmarkVsPcapgoWrite(b *testing.B) {
	for _, size := range []int{60, 1500} {
		data := bytes.Repeat([]byte{0x5a}, size)
		t0 := time.Unix(1795306106, 0)
		b.Run(itoa(size)+"/ours", func(b *testing.B) {
			w, _ := NewPcapngWriter(io.Discard)
			w.AddInterface("/dev/ttyUSB0", LinkUser0, 0)
			p := Packet{Time: t0, LinkType: LinkUser0, Direction: DirInbound, Data: data, Length: size}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if err := w.WritePacket(&p); err != nil {
					b.Fatal(err)
				}
			}
			w.Flush()
		})
		b.Run(itoa(size)+"/pcapgo", func(b *testing.B) {
			w, _ := pcapgo.NewNgWriterInterface(io.Discard,
				pcapgo.NgInterface{Name: "/dev/ttyUSB0", LinkType: layers.LinkType(LinkUser0)}, pcapgo.NgWriterOptions{})
			ci := gopacket.CaptureInfo{Timestamp: t0, CaptureLength: size, Length: size}
			flags := pcapgo.NgEpbFlags{Direction: pcapgo.NgEpbFlagDirectionInbound}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if err := w.WritePacketWithOptions(ci, data, pcapgo.NgPacketOptions{Flags: &flags}); err != nil {
					b.Fatal(err)
				}
			}
			w.Flush()
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
