package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/dissect-tools/dissect/internal/longtest"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// Tests of what a live capture does when its output is slow: nothing may be
// lost silently. They capture real loopback traffic (root; CI is root) and
// skip with a message otherwise.

// slowReader is the reader of dissect's stdout that waits before reading,
// as `dissect ... | (sleep 8; cat)` does: until then, writes block.
type slowReader struct {
	pr   *io.PipeReader
	pw   *io.PipeWriter
	recs chan []jsonRecord
}

func newSlowReader(t *testing.T, wait time.Duration) *slowReader {
	pr, pw := io.Pipe()
	s := &slowReader{pr: pr, pw: pw, recs: make(chan []jsonRecord, 1)}
	go func() {
		time.Sleep(wait)
		var recs []jsonRecord
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var r jsonRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Errorf("bad JSON line %q: %v", sc.Text(), err)
				continue
			}
			recs = append(recs, r)
		}
		s.recs <- recs
	}()
	return s
}

// runSlow runs the CLI in-process with stdout going to a reader that waits
// before reading, and returns once the capture has started.
func runSlow(t *testing.T, out *slowReader, args ...string) *lvRun {
	t.Helper()
	r := &lvRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.code = run(args, strings.NewReader(""), out.pw, &r.stderr)
		out.pw.Close()
	}()
	lvWaitFor(t, r, "the capture to start", func() bool { return strings.Contains(r.stderr.String(), "capturing on") })
	return r
}

// deltaExchange runs a Deltarobot session over loopback TCP: both sides
// send the handshake, then the leader sends n actuator positions and the
// follower n more, each message its own write (TCP_NODELAY:
// many small segments), then both close. It returns the bytes each side
// sent: [follower (the client, dir 0), leader].
func deltaExchange(t *testing.T, ln net.Listener, n int) [2]int64 {
	t.Helper()
	client, server := lvTcpPair(t, ln)
	hs := append(lvHex(t, lvDRMagic), lvHex(t, lvDRVersion)...)
	pos := lvHex(t, lvDRPos123)
	var sent [2]int64
	done := make(chan error, 1)
	go func() { // the follower drains what the leader sends
		_, err := io.Copy(io.Discard, client)
		done <- err
	}()
	go func() {
		_, _ = io.Copy(io.Discard, server)
	}()
	lvWriteAll(t, client, hs)
	lvWriteAll(t, server, hs)
	sent[0] += int64(len(hs))
	sent[1] += int64(len(hs))
	for range n {
		lvWriteAll(t, server, pos)
		sent[1] += int64(len(pos))
		lvWriteAll(t, client, pos)
		sent[0] += int64(len(pos))
	}
	client.(*net.TCPConn).CloseWrite()
	server.Close()
	<-done
	client.Close()
	return sent
}

// tally adds up, per direction (by source address), the bytes of messages,
// skipped and gap records, checking that they tile the direction.
type dirTally struct {
	msgs           int
	msg, skip, gap int64
	next           int64
	untiled        bool
}

func tallyJSON(t *testing.T, recs []jsonRecord) map[string]*dirTally {
	t.Helper()
	m := map[string]*dirTally{}
	for _, r := range recs {
		d := m[r.Src]
		if d == nil {
			d = &dirTally{}
			m[r.Src] = d
		}
		if *r.Offset != d.next {
			t.Errorf("%s: %s record at offset %d, want %d: records must tile the stream", r.Src, r.Type, *r.Offset, d.next)
		}
		d.next = *r.Offset + *r.Length
		switch r.Type {
		case "gap":
			d.gap += *r.Length
		case "skipped":
			d.skip += *r.Length
		default:
			d.msgs++
			d.msg += *r.Length
		}
	}
	return m
}

// tcpdumpRun captures the same traffic with tcpdump, as the reference for
// what the kernel delivered.
type tcpdumpRun struct {
	cmd  *exec.Cmd
	file string
}

func startTcpdump(t *testing.T, filter string) *tcpdumpRun {
	t.Helper()
	if _, err := exec.LookPath("tcpdump"); err != nil {
		t.Log("tcpdump is not installed: the -w file is not compared with it (CI installs it)")
		return nil
	}
	file := filepath.Join(t.TempDir(), "tcpdump.pcap")
	cmd := exec.Command("tcpdump", "-i", "lo", "-n", "-U", "-B", "32768", "-w", file, filter)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "listening on") {
			go io.Copy(io.Discard, stderr)
			return &tcpdumpRun{cmd: cmd, file: file}
		}
	}
	t.Fatalf("tcpdump did not start")
	return nil
}

func (r *tcpdumpRun) stop(t *testing.T) int {
	t.Helper()
	r.cmd.Process.Signal(syscall.SIGINT)
	r.cmd.Wait()
	return countPackets(t, r.file)
}

func countPackets(t *testing.T, path string) int {
	t.Helper()
	src, err := capture.OpenFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer src.Close()
	n := 0
	for {
		if _, err := src.Next(); err != nil {
			return n
		}
		n++
	}
}

// The scenario: 20,000 × 2 Deltarobot messages on loopback while
// the reader of the JSON waits 8 s before reading; Ctrl-C 2 s after the
// traffic. Every message is decoded, nothing is a gap, -w holds what
// tcpdump saw, exit 0.
func TestLiveSlowReaderLosesNothing(t *testing.T) {
	lvNeedCapture(t)
	longtest.Skip(t)
	ln, port := lvListenTCP(t)
	filter := fmt.Sprintf("tcp port %d", port)
	save := filepath.Join(t.TempDir(), "x.pcapng")
	td := startTcpdump(t, filter)
	out := newSlowReader(t, 8*time.Second)
	r := runSlow(t, out, "-i", "lo", "-f", filter, "-o", "json", "-w", save)
	const n = 20000
	sent := deltaExchange(t, ln, n)
	time.Sleep(2 * time.Second)
	lvInterrupt(t)
	recs := <-out.recs
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stderr.String())
	}
	dirs := tallyJSON(t, recs)
	if len(dirs) != 2 {
		t.Fatalf("%d directions in the output, want 2\n%s", len(dirs), r.stderr.String())
	}
	for src, d := range dirs {
		if d.gap != 0 || d.skip != 0 || d.msgs != n+2 || (d.msg != sent[0] && d.msg != sent[1]) {
			t.Errorf("%s: %d messages (%d bytes), %d skipped, %d gap bytes; want %d messages, no loss (sent %v)\n%s", src, d.msgs, d.msg, d.skip, d.gap, n+2, sent, r.stderr.String())
		}
	}
	got := countPackets(t, save)
	if td != nil {
		if want := td.stop(t); got != want {
			t.Errorf("-w holds %d packets, tcpdump -w saved %d", got, want)
		}
	}
	stderr := r.stderr.String()
	if !strings.Contains(stderr, fmt.Sprintf("%d written to %s", got, save)) || !strings.Contains(stderr, " 0 dropped by dissect") || !strings.Contains(stderr, " 0 dropped by the kernel") {
		t.Errorf("the summary does not account for the packets (-w has %d):\n%s", got, stderr)
	}
}

// With a tiny decoding queue and a reader that does not read, packets are
// dropped by dissect: the drops are counted and shown, and the gap records
// account for exactly the bytes that were sent but not decoded.
func TestLiveForcedLossIsAccounted(t *testing.T) {
	lvNeedCapture(t)
	ln, port := lvListenTCP(t)
	filter := fmt.Sprintf("tcp port %d", port)
	out := newSlowReader(t, 3*time.Second)
	r := runSlow(t, out, "-i", "lo", "-f", filter, "-o", "json", "--decode-queue", "65536")
	sent := deltaExchange(t, ln, 100000)
	time.Sleep(500 * time.Millisecond)
	lvInterrupt(t)
	recs := <-out.recs
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stderr.String())
	}
	stderr := r.stderr.String()
	dirs := tallyJSON(t, recs)
	// Packets the kernel drops are known only by the sequence and
	// acknowledgement numbers of later packets; if it dropped a
	// connection's last packets too (a loaded machine), its tail cannot be
	// known. Without kernel drops every byte sent must be accounted for.
	kernelDrops := !strings.Contains(stderr, " 0 dropped by the kernel")
	var gaps int64
	for src, d := range dirs {
		total := d.msg + d.skip + d.gap
		exact := total == sent[0] || total == sent[1]
		if !exact && (!kernelDrops || total > max(sent[0], sent[1])) {
			t.Errorf("%s: %d message + %d skipped + %d gap bytes = %d; sent %v", src, d.msg, d.skip, d.gap, total, sent)
		}
		if !exact {
			t.Logf("%s: %d of %v bytes accounted; the kernel dropped packets, some possibly at the end", src, total, sent)
		}
		gaps += d.gap
	}
	dropped := strings.Contains(stderr, "(decoding fell behind") || !strings.Contains(stderr, " 0 dropped by the kernel")
	if !dropped {
		t.Fatalf("nothing was dropped: the test did not force loss\n%s", stderr)
	}
	if gaps == 0 {
		t.Errorf("packets were dropped but no gap record says so\n%s", stderr)
	}
	if !strings.Contains(stderr, "warning:") {
		t.Errorf("no warning on stderr at the first drop\n%s", stderr)
	}
	if !strings.Contains(stderr, "gaps:     ") {
		t.Errorf("no gap line in the summary\n%s", stderr)
	}
}
