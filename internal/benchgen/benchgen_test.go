package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"github.com/dissect-tools/dissect/internal/longtest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
)

func defaults(sizeMB float64, seed uint64) Config {
	return Config{SizeMB: sizeMB, Conns: 4, MSS: 1448, PingEvery: 1000, Seed: seed}
}

func generate(t *testing.T, cfg Config) ([]byte, Stats) {
	t.Helper()
	var b bytes.Buffer
	st, err := Generate(&b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), st
}

// TestSeed: the same seed writes the same bytes, another seed others.
func TestSeed(t *testing.T) {
	a, _ := generate(t, defaults(0.3, 1))
	b, _ := generate(t, defaults(0.3, 1))
	c, _ := generate(t, defaults(0.3, 2))
	if !bytes.Equal(a, b) {
		t.Error("seed 1 wrote two different files")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 1 and 2 wrote the same file")
	}
}

// sum16 is the RFC 1071 one's complement sum of b, folded: 0xffff over
// a header (or pseudo-header and segment) whose checksum is right.
func sum16(parts ...[]byte) uint16 {
	var s uint32
	var all []byte
	for _, p := range parts {
		all = append(all, p...)
	}
	for i := 0; i+1 < len(all); i += 2 {
		s += uint32(all[i])<<8 | uint32(all[i+1])
	}
	if len(all)%2 == 1 {
		s += uint32(all[len(all)-1]) << 8
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}

// TestShape reads a capture back and checks what docs/performance.md
// says of it: Ethernet/IPv4/TCP to port 4000 with correct checksums, 4
// connections each opened by a handshake and closed by FIN both ways,
// about 70% of the leader's data segments a full MSS, and the sizes and
// packet count the stats give.
func TestShape(t *testing.T) {
	cfg := defaults(1, 7)
	file, st := generate(t, cfg)
	if st.Bytes != int64(len(file)) {
		t.Errorf("stats bytes %d, file %d", st.Bytes, len(file))
	}
	if st.Bytes < 900_000 || st.Bytes > 1_200_000 {
		t.Errorf("1 MB asked, %d bytes written", st.Bytes)
	}
	src, err := capture.NewReader(bytes.NewReader(file), "gen.pcap")
	if err != nil {
		t.Fatal(err)
	}
	type conn struct{ syn, synack, fin [2]bool }
	conns := map[uint16]*conn{}
	var pkts, full, data int64
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		pkts++
		d := p.Data
		if p.LinkType != capture.LinkEthernet || binary.BigEndian.Uint16(d[12:14]) != 0x0800 {
			t.Fatalf("packet %d: not Ethernet/IPv4", pkts)
		}
		ip := d[14:]
		if ip[0] != 0x45 || ip[9] != 6 || int(binary.BigEndian.Uint16(ip[2:4])) != len(ip) {
			t.Fatalf("packet %d: not a 20-byte IPv4 header over TCP of the frame's length", pkts)
		}
		if sum16(ip[:20]) != 0xffff {
			t.Errorf("packet %d: IPv4 header checksum wrong", pkts)
		}
		seg := ip[20:]
		pseudo := append(append([]byte{}, ip[12:20]...), 0, 6, byte(len(seg)>>8), byte(len(seg)))
		if sum16(pseudo, seg) != 0xffff {
			t.Errorf("packet %d: TCP checksum wrong", pkts)
		}
		sport, dport := binary.BigEndian.Uint16(seg[0:2]), binary.BigEndian.Uint16(seg[2:4])
		flags, payload := seg[13], seg[20:]
		client, fromServer := sport, sport == 4000
		if fromServer {
			client = dport
		} else if dport != 4000 {
			t.Fatalf("packet %d: ports %d -> %d, neither is 4000", pkts, sport, dport)
		}
		c := conns[client]
		if c == nil {
			c = &conn{}
			conns[client] = c
		}
		side := 0
		if fromServer {
			side = 1
		}
		if flags&0x02 != 0 {
			if flags&0x10 != 0 {
				c.synack[side] = true
			} else {
				c.syn[side] = true
			}
		}
		if flags&0x01 != 0 {
			c.fin[side] = true
		}
		if fromServer && len(payload) > 0 {
			data++
			if len(payload) == cfg.MSS {
				full++
			}
		}
	}
	if pkts != st.Packets {
		t.Errorf("%d packets read, stats say %d", pkts, st.Packets)
	}
	if len(conns) != 4 {
		t.Errorf("%d connections, want 4", len(conns))
	}
	for port, c := range conns {
		if !c.syn[0] || !c.synack[1] || !c.fin[0] || !c.fin[1] {
			t.Errorf("connection from port %d: SYN %v, SYN-ACK %v, FIN %v", port, c.syn[0], c.synack[1], c.fin)
		}
	}
	// 70% full plus the random sizes that happen to be MSS; the closes
	// add a few full ones.
	if r := float64(full) / float64(data); r < 0.64 || r > 0.76 {
		t.Errorf("%d of %d leader segments a full MSS (%.2f), want about 0.70", full, data, r)
	}
}

// buildDissect builds the dissect command of this tree into dir.
func buildDissect(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "dissect")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/dissect")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// generateFile runs the command as the docs do: the capture and its
// sidecar, read back.
func generateFile(t *testing.T, dir string, sizeMB string) (string, Stats) {
	t.Helper()
	path := filepath.Join(dir, "d.pcap")
	var out, errb bytes.Buffer
	if err := run([]string{"-size-mb", sizeMB, "-o", path}, &out, &errb); err != nil {
		t.Fatalf("benchgen: %v\n%s", err, errb.String())
	}
	b, err := os.ReadFile(path + ".stats.json")
	if err != nil {
		t.Fatal(err)
	}
	var st Stats
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(out.Bytes()), bytes.TrimSpace(b)) {
		t.Error("the stats printed differ from the sidecar")
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != st.Bytes {
		t.Fatalf("the capture: %v, sidecar says %d bytes", err, st.Bytes)
	}
	return path, st
}

// byType turns the sidecar's counts per id into counts per record type.
func byType(t *testing.T, st Stats) map[string]int64 {
	t.Helper()
	want := map[string]int64{}
	var total int64
	for k, n := range st.MessagesByID {
		id, err := strconv.ParseUint(k, 0, 16)
		if err != nil {
			t.Fatalf("sidecar key %q: %v", k, err)
		}
		name, ok := deltaenc.TypeName(uint16(id))
		if !ok {
			t.Fatalf("sidecar key %q is not a Deltarobot message", k)
		}
		if n > 0 {
			want[name] = n
		}
		total += n
	}
	if total != st.MessagesTotal {
		t.Errorf("sidecar: ids add up to %d, messages_total %d", total, st.MessagesTotal)
	}
	return want
}

var (
	rowRE     = regexp.MustCompile(`(?m)^│ deltarobot │ (\S+)\s+│ (\d+)\s+│$`)
	noGapRE   = regexp.MustCompile(`(?m)^gaps:\s+0 `)
	noSkipRE  = regexp.MustCompile(`(?m)^skipped:\s+0 records`)
	noWarnRE  = regexp.MustCompile(`(?m)^warnings: 0 records`)
	messageRE = regexp.MustCompile(`(?m)^messages: (\d+)$`)
)

// TestDissectCounts: `dissect -q -d tcp.port==4000,deltarobot` on a 2 MB
// capture reports exactly the sidecar's count of every message, with no
// gap, no skipped byte and no warning.
func TestDissectCounts(t *testing.T) {
	longtest.Skip(t)
	dir := t.TempDir()
	bin := buildDissect(t, dir)
	path, st := generateFile(t, dir, "2")
	var errb bytes.Buffer
	cmd := exec.Command(bin, "-q", "-d", "tcp.port==4000,deltarobot", path)
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("dissect: %v\n%s", err, errb.String())
	}
	sum := errb.String()
	got := map[string]int64{}
	for _, m := range rowRE.FindAllStringSubmatch(sum, -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		got[m[1]] = n
	}
	want := byType(t, st)
	if len(got) != len(want) {
		t.Errorf("types: got %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: dissect counted %d, the sidecar says %d", k, got[k], n)
		}
	}
	if m := messageRE.FindStringSubmatch(sum); m == nil || m[1] != strconv.FormatInt(st.MessagesTotal, 10) {
		t.Errorf("messages line %v, want %d", m, st.MessagesTotal)
	}
	for _, re := range []*regexp.Regexp{noGapRE, noSkipRE, noWarnRE} {
		if !re.MatchString(sum) {
			t.Errorf("summary does not match %s", re)
		}
	}
	// Each pong follows its ping: the request/reply matcher pairs every
	// one, and gives it its round trip (a pong sent before its ping, as
	// the generator once sent them, has none).
	var out bytes.Buffer
	cmd = exec.Command(bin, "-o", "json", "--no-summary", "-d", "tcp.port==4000,deltarobot", path)
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("dissect -o json: %v", err)
	}
	pongs, timed := 0, 0
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, `"type":"pong"`) {
			pongs++
			if strings.Contains(line, `"rtt_ms":`) {
				timed++
			}
		}
	}
	if pongs == 0 || timed != pongs {
		t.Errorf("%d of %d pongs matched to their ping", timed, pongs)
	}
	if t.Failed() {
		t.Log(sum)
	}
}

// TestLuaCounts: tshark with the Lua dissector sees exactly the sidecar's
// message ids.
func TestLuaCounts(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed (apt-get install tshark): the Lua dissector is not checked")
	}
	dir := t.TempDir()
	lua := filepath.Join(dir, "deltarobot.lua")
	if err := run([]string{"-lua", "-o", lua}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	path, st := generateFile(t, dir, "0.4")
	var out, errb bytes.Buffer
	cmd := exec.Command(tshark, "-X", "lua_script:"+lua, "-o", "deltarobot.port:4000", "-r", path,
		"-T", "fields", "-e", "deltarobot.message_id")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tshark: %v\n%s", err, errb.String())
	}
	if strings.Contains(errb.String(), "Lua") {
		t.Fatalf("tshark: %s", errb.String())
	}
	got := map[string]int64{}
	for _, line := range strings.Fields(out.String()) {
		for _, id := range strings.Split(line, ",") {
			got[id]++
		}
	}
	for k, n := range st.MessagesByID {
		if got[k] != n {
			t.Errorf("%s: tshark saw %d, the sidecar says %d", k, got[k], n)
		}
		delete(got, k)
	}
	if len(got) > 0 {
		t.Errorf("tshark saw ids the capture does not hold: %v", got)
	}
}

// TestUsage: bad flags are usage errors and write nothing.
func TestUsage(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.pcap")
	for _, args := range [][]string{
		{"-size-mb", "1"},
		{"-size-mb", "0", "-o", out},
		{"-size-mb", "NaN", "-o", out},
		{"-conns", "0", "-o", out},
		{"-conns", "246", "-o", out},
		{"-mss", "10", "-o", out},
		{"-ping-every", "0", "-o", out},
		{"-o", out, "extra"},
		{"-bogus", "-o", out},
	} {
		if err := run(args, io.Discard, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%q wrote %s", args, out)
		}
	}
}

// TestLuaHostile: the Lua dissector runs over the shipped Deltarobot
// captures (broken messages, lost segments, a stream joined mid-way)
// without a Lua error in any frame.
func TestLuaHostile(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed (apt-get install tshark): the Lua dissector is not checked")
	}
	lua := filepath.Join(t.TempDir(), "deltarobot.lua")
	if err := run([]string{"-lua", "-o", lua}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../pcaps/deltarobot_*.pcap*")
	if len(files) < 5 {
		t.Fatalf("only %d Deltarobot captures in ../../pcaps", len(files))
	}
	for _, f := range files {
		out, err := exec.Command(tshark, "-X", "lua_script:"+lua, "-o", "deltarobot.port:4000", "-r", f, "-V").CombinedOutput()
		if err != nil {
			t.Errorf("%s: tshark: %v\n%s", f, err, out)
			continue
		}
		if i := bytes.Index(bytes.ToLower(out), []byte("lua error")); i >= 0 {
			t.Errorf("%s: %s", f, out[max(0, i-200):min(len(out), i+300)])
		}
		if !bytes.Contains(out, []byte("Deltarobot VR")) {
			t.Errorf("%s: no Deltarobot VR message dissected", f)
		}
	}
}
