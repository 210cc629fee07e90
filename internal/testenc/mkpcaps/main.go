// Command mkpcaps writes the generated sample captures of the repository's
// pcaps/ directory (Deltarobot, Neptune, Roboid, HandControl), each with a
// .truth.json sidecar listing the records a decoder following the output
// contract must produce. Everything comes from the spec-based encoders in
// internal/testenc/deltaenc, internal/testenc/neptuneenc,
// internal/testenc/roboidenc and internal/testenc/handcontrolenc and the
// frame builders in internal/pktbuild;
// the decoders are never run. The output is deterministic: running it
// again gives byte-identical files.
//
// Usage:
//
//	go run ./internal/testenc/mkpcaps -out pcaps/
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
)

// base is the capture time of every sample's first packet.
var base = time.Date(2024, 3, 14, 10, 0, 0, 0, time.UTC)

// Generator is the command line recorded in the truth files.
const Generator = "go run ./internal/testenc/mkpcaps -out pcaps/"

// output is one file to write.
type output struct {
	name string
	data []byte
}

func main() {
	out := flag.String("out", "pcaps", "directory to write the captures and truth files into")
	flag.Parse()
	files, err := generate()
	if err == nil {
		err = write(*out, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkpcaps:", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Printf("%-36s %6d bytes\n", filepath.Join(*out, f.name), len(f.data))
	}
}

func write(dir string, files []output) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// capFile is a sample and how to frame and store it.
type capFile struct {
	sm     *sample
	encap  pktbuild.Encap
	ng     bool   // pcapng instead of pcap
	ifName string // pcapng interface name
}

var (
	v4Server = netip.MustParseAddr("10.20.0.1")
	v4Client = netip.MustParseAddr("10.20.0.77")
	v6Server = netip.MustParseAddr("2001:db8:d17a::1")
	v6Client = netip.MustParseAddr("2001:db8:d17a::4d")
)

func ap(a netip.Addr, port uint16) netip.AddrPort { return netip.AddrPortFrom(a, port) }

// generate builds every sample file and its truth file: the Deltarobot
// samples first, then the Neptune and Roboid ones, then the HandControl
// ones.
func generate() ([]output, error) {
	caps, err := samples()
	if err != nil {
		return nil, err
	}
	files, err := render(caps)
	if err != nil {
		return nil, err
	}
	gens, err := roboticsSamples()
	if err != nil {
		return nil, err
	}
	for _, g := range gens {
		out, err := renderGen(g)
		if err != nil {
			return nil, err
		}
		files = append(files, out...)
	}
	hcs, err := handcontrolSamples()
	if err != nil {
		return nil, err
	}
	for _, g := range hcs {
		out, err := renderGen(g.genFile)
		if err != nil {
			return nil, err
		}
		files = append(files, out...)
	}
	return files, nil
}

// samples builds the sample conversations.
func samples() ([]capFile, error) {
	eth := pktbuild.Encap{Type: capture.LinkEthernet}
	var caps []capFile

	// A complete conversation.
	s := deltaenc.NewSession(deltaenc.Options{Seed: 1})
	c, sv := ap(v4Client, 50514), ap(v4Server, 4000)
	caps = append(caps, capFile{sm: newSample("deltarobot_session.pcap",
		"one complete TCP conversation on port 4000: handshake, magic+version both ways, a curve, 40 progress updates, pings and pongs, end_of_transmission both ways, FIN both ways; writes are cut into segments at arbitrary byte offsets",
		s, conversation(s, 101, c, sv, [2][]int64{})), encap: eth})

	// The same kind of conversation with capture loss, a retransmission and
	// reordering.
	s = deltaenc.NewSession(deltaenc.Options{Seed: 2})
	c = ap(v4Client, 50602)
	sm, err := withLoss("deltarobot_loss.pcap",
		"like deltarobot_session.pcap, but one server segment was not captured (a gap), one earlier server segment appears twice (retransmission) and two later adjacent server segments are swapped (out of order); the client's ACKs cover the missing bytes",
		s, conversation(s, 102, c, sv, [2][]int64{}))
	if err != nil {
		return nil, err
	}
	caps = append(caps, capFile{sm: sm, encap: eth})

	// A capture begun in the middle of the conversation.
	s = deltaenc.NewSession(deltaenc.Options{Seed: 3})
	c = ap(v4Client, 50733)
	sm, err = midstream("deltarobot_midstream.pcap",
		"a capture started in the middle of a conversation: no SYN; the first packet is a server segment that begins inside a message (its first two bytes have an undefined size code); the client's direction begins at its next segment",
		s, 103, c, sv)
	if err != nil {
		return nil, err
	}
	caps = append(caps, capFile{sm: sm, encap: eth})

	// Malformed and unusual messages.
	s = deltaenc.NewSession(deltaenc.Options{Seed: 4, Broken: true})
	c = ap(v4Client, 50811)
	caps = append(caps, capFile{sm: newSample("deltarobot_garbage.pcap",
		"a conversation with broken messages: server: id 0x7003 (undefined size code 0x7) and 3 junk bytes, then valid messages; unknown type 0x300a; known type under another size code 0x2003; a curve of 5 points and 7 trailing bytes; unknown variable-length type 0xf00b; reserved type 0x000 as 0x1000; client: 0x3006 (end_of_transmission's type under size code 3) and, at the end, an end_of_transmission cut short after 7 of its 9 bytes",
		s, conversation(s, 104, c, sv, [2][]int64{})), encap: eth})

	// Link-layer coverage: IPv6 in an 802.1Q VLAN (pcapng), Linux cooked v2.
	s = deltaenc.NewSession(deltaenc.Options{Seed: 5, Ticks: 20})
	caps = append(caps, capFile{sm: newSample("deltarobot_vlan_ipv6.pcapng",
		"a complete conversation (20 progress updates) over IPv6 inside an 802.1Q VLAN (id 42), Ethernet, pcapng with one interface (if_name eth0, nanosecond timestamps)",
		s, conversation(s, 105, ap(v6Client, 50915), ap(v6Server, 4000), [2][]int64{})),
		encap: pktbuild.Encap{Type: capture.LinkEthernet, VLANs: []uint16{42}}, ng: true, ifName: "eth0"})
	s = deltaenc.NewSession(deltaenc.Options{Seed: 6, Ticks: 20})
	caps = append(caps, capFile{sm: newSample("deltarobot_sll2.pcap",
		"a complete conversation (20 progress updates) over IPv4 as captured by tcpdump -i any: Linux cooked capture v2 (LINKTYPE_LINUX_SLL2, 276)",
		s, conversation(s, 106, ap(v4Client, 51020), sv, [2][]int64{})),
		encap: pktbuild.Encap{Type: capture.LinkLinuxSLL2}})
	return caps, nil
}

// render frames the samples and writes them as files, with their truth.
func render(caps []capFile) ([]output, error) {
	var files []output
	for _, cf := range caps {
		if err := cf.sm.check(cutBase(cf.sm)); err != nil {
			return nil, err
		}
		frames := make([]frame, len(cf.sm.pkts))
		for i, p := range cf.sm.pkts {
			f := p.seg.Frame(cf.encap)
			frames[i] = frame{t: base.Add(p.at), data: f.Data, orig: f.Length}
		}
		var data []byte
		if cf.ng {
			data = pcapngFile(uint16(cf.encap.Type), cf.ifName, cf.sm.comment, frames)
		} else {
			data = pcapFile(uint32(cf.encap.Type), frames)
		}
		files = append(files, output{cf.sm.name, data})
		truth, err := truthJSON(cf.sm)
		if err != nil {
			return nil, err
		}
		files = append(files, output{strings.TrimSuffix(strings.TrimSuffix(cf.sm.name, ".pcapng"), ".pcap") + ".truth.json", truth})
	}
	return files, nil
}

// cutBase returns, per direction, the session offset of the first byte
// the sample holds (0 unless the capture starts mid-stream).
func cutBase(sm *sample) [2]int64 {
	var b [2]int64
	for d := range 2 {
		b[d] = -1
		for _, p := range sm.pkts {
			if p.data && p.dir == d {
				b[d] = p.start
				break
			}
		}
		if b[d] < 0 {
			b[d] = 0
		}
	}
	return b
}

// truthJSON writes the expected records of a sample, one record per line.
func truthJSON(sm *sample) ([]byte, error) {
	var b bytes.Buffer
	q := func(v any) string {
		j, err := json.Marshal(v)
		if err != nil {
			panic(err) // strings and ints only
		}
		return string(j)
	}
	fmt.Fprintf(&b, "{\n  \"file\": %s,\n  \"generator\": %s,\n", q(sm.name), q(Generator))
	fmt.Fprintf(&b, "  \"source\": %s,\n", q("records expected from the spec-based encoder (internal/testenc/deltaenc); not produced by running the decoder"))
	fmt.Fprintf(&b, "  \"description\": %s,\n", q(sm.comment))
	fmt.Fprintf(&b, "  \"decode_as\": %s,\n", q("tcp.port==4000,deltarobot"))
	fmt.Fprintf(&b, "  \"keys\": %s,\n", q("records: type, offset, length and fields as in the output contract (pong rtt_ms left out); "+
		"\"warning\": \"yes\" = at least one warning expected, \"no\" = none, absent = not asserted; "+
		"\"rtt_ms\" (pongs): \"yes\"/\"no\" = the key must be present/absent, absent = not asserted; "+
		"\"trailing\": hex of a curve's bytes after its last whole point"))
	b.WriteString("  \"streams\": [\n    {\n      \"stream\": 0,\n      \"transport\": \"tcp\",\n      \"directions\": [\n")
	for i, d := range [2]int{sm.dir0, sm.dir0 ^ 1} {
		seg := sm.pkts[0].seg
		for _, p := range sm.pkts {
			if p.dir == d {
				seg = p.seg
				break
			}
		}
		if seg.From != pktbuild.Side(d) {
			return nil, fmt.Errorf("%s: no packet from the %s", sm.name, deltaenc.RoleName(d))
		}
		var gaps, skipped []string
		for _, m := range sm.truth[d] {
			r := fmt.Sprintf("[%d, %d]", m.Offset, m.End())
			switch m.Type {
			case deltaenc.TypeGap:
				gaps = append(gaps, r)
			case deltaenc.TypeSkipped:
				skipped = append(skipped, r)
			}
		}
		fmt.Fprintf(&b, "        {\n          \"dir\": %d,\n          \"role\": %s,\n          \"src\": %s,\n          \"dst\": %s,\n          \"bytes\": %d,\n",
			i, q(deltaenc.RoleName(d)), q(seg.Src.String()), q(seg.Dst.String()), len(sm.streams[d]))
		fmt.Fprintf(&b, "          \"gaps\": [%s],\n          \"skipped\": [%s],\n          \"records\": [\n", strings.Join(gaps, ", "), strings.Join(skipped, ", "))
		for k, m := range sm.truth[d] {
			j, err := json.Marshal(m)
			if err != nil {
				return nil, err
			}
			sep := ","
			if k == len(sm.truth[d])-1 {
				sep = ""
			}
			fmt.Fprintf(&b, "            %s%s\n", j, sep)
		}
		b.WriteString("          ]\n        }")
		if i == 0 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("      ]\n    }\n  ]\n}\n")
	if !json.Valid(b.Bytes()) {
		return nil, fmt.Errorf("%s: truth file is not valid JSON", sm.name)
	}
	return b.Bytes(), nil
}
