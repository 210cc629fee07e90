package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// A cut (-r FILE -Y FILTER -w OUT) reads its input twice. These tests
// make sure it never writes a cut of other packets than those it marked:
// inputs that cannot be read twice are refused at once, an input that
// changes between the readings is refused, a signal stops either reading
// and leaves no cut behind. The runs are child processes
// (TestHelperProcess), stopped with SIGSTOP at a known point of their
// first reading (the input open, /proc) while the test changes the file.

// cutFilter passes the two protocol_version records of a Deltarobot
// session (bigCapture): its first packets are marked.
const cutFilter = `type == "protocol_version"`

// childCmd is dissect as a child process with args, prepared by prep
// before it starts (nil: nothing); stdout and stderr are collected.
func childCmd(t *testing.T, args []string, prep func(*exec.Cmd)) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	js, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(js))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if prep != nil {
		prep(cmd)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &stderr
}

// TestCutRefusesWhatCannotBeReadTwice: a named pipe, /dev/stdin on a
// pipe and a process substitution (/dev/fd/N) are refused at once, with
// the one-line error of -r -, and no -w file is made. Before, a named
// pipe blocked the second reading forever, and the others made an empty
// cut with exit status 0.
func TestCutRefusesWhatCannotBeReadTwice(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(pcapDir, "vrpn_tcp_only.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	for _, c := range []struct {
		name, input string
		pipe        func(cmd *exec.Cmd, r *os.File) // how the child gets the pipe's reading end
	}{
		{"named pipe", fifo, nil},
		{"/dev/stdin", "/dev/stdin", func(cmd *exec.Cmd, r *os.File) { cmd.Stdin = r }},
		{"process substitution", "/dev/fd/3", func(cmd *exec.Cmd, r *os.File) { cmd.ExtraFiles = []*os.File{r} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(c.name, "/", "_")+".pcapng")
			args := []string{"-r", c.input, "-Y", `type == "vrpn_Base pong_message"`, "-w", out}
			var cmd *exec.Cmd
			var stderr *bytes.Buffer
			if c.pipe == nil {
				cmd, stderr = childCmd(t, args, nil)
				// The capture is written into the named pipe for as long
				// as someone reads it.
				go func() {
					if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
						f.Write(raw)
						f.Close()
					}
				}()
				t.Cleanup(func() { // unblock the writer if nobody opened the pipe
					if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
						f.Close()
					}
				})
			} else {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				cmd, stderr = childCmd(t, args, func(cmd *exec.Cmd) { c.pipe(cmd, r) })
				r.Close()
				go func() { w.Write(raw); w.Close() }()
			}
			code := exitOf(t, cmd)
			first, _, _ := strings.Cut(stderr.String(), "\n")
			if code != exitUsage || !strings.HasPrefix(first, "dissect: -r "+c.input+" with -Y and -w:") || !strings.Contains(first, "cannot be read again") {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and the error of -r -", code, stderr, exitUsage)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("the refused cut made %s", out)
			}
		})
	}
}

// splitPcap splits pcap bytes into the file header and the packet
// records (each with its 16-byte header), little-endian files only.
func splitPcap(t *testing.T, b []byte) (hdr []byte, recs [][]byte) {
	t.Helper()
	if len(b) < 24 || (binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 && binary.LittleEndian.Uint32(b) != 0xa1b23c4d) {
		t.Fatal("not a little-endian pcap")
	}
	hdr, b = b[:24], b[24:]
	for len(b) >= 16 {
		n := 16 + int(binary.LittleEndian.Uint32(b[8:12]))
		recs = append(recs, b[:n])
		b = b[n:]
	}
	return hdr, recs
}

// laterBy returns pcap bytes with every packet's time moved by sec
// seconds: the same size, other times.
func laterBy(t *testing.T, b []byte, sec uint32) []byte {
	hdr, recs := splitPcap(t, b)
	out := append([]byte(nil), hdr...)
	for _, r := range recs {
		r = append([]byte(nil), r...)
		binary.LittleEndian.PutUint32(r, binary.LittleEndian.Uint32(r)+sec)
		out = append(out, r...)
	}
	return out
}

// stopInFirstReading waits until the child has path open, the first time
// it opens it (the first reading of a cut), and has read at least a
// quarter of it, and stops it there (SIGSTOP). It reports false when the
// child had read all of it by then, or had ended before its open file was
// seen (a loaded test machine that left this goroutine no CPU meanwhile:
// try again). A run that never opens it fails the test after a minute.
func stopInFirstReading(t *testing.T, cmd *exec.Cmd, path string) bool {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	posRE := regexp.MustCompile(`pos:\s+(\d+)`)
	pos := func(fd string) int64 {
		m := posRE.FindSubmatch(must(os.ReadFile("/proc/" + pid + "/fdinfo/" + fd)))
		if m == nil {
			return -1
		}
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		return n
	}
	fd := ""
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if fd == "" {
			ents, _ := os.ReadDir("/proc/" + pid + "/fd")
			for _, e := range ents {
				if l, _ := os.Readlink("/proc/" + pid + "/fd/" + e.Name()); l == path {
					fd = e.Name()
				}
			}
			if fd == "" && ended(pid) {
				return false
			}
			continue
		}
		if p := pos(fd); p < st.Size()/4 && p >= 0 {
			continue
		}
		cmd.Process.Signal(syscall.SIGSTOP)
		return pos(fd) >= 0 && pos(fd) < st.Size()
	}
	t.Fatal("the child never read its input")
	return false
}

// ended reports whether process pid has exited (a zombie, not yet waited
// for) or is gone.
func ended(pid string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return true
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X'
}

// startStopped starts dissect with args and stops it in its first
// reading of in (stopInFirstReading), trying again when it was too quick.
func startStopped(t *testing.T, in string, args []string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	for try := 0; ; try++ {
		cmd, stderr := childCmd(t, args, nil)
		if stopInFirstReading(t, cmd, in) {
			return cmd, stderr
		}
		cmd.Process.Kill()
		err := cmd.Wait()
		t.Logf("try %d: the child was not stopped in its first reading (%v); its stderr: %q", try+1, err, stderr.String())
		if try == 5 {
			t.Fatal("the child read all its input, or ended, before it could be stopped, 6 times")
		}
	}
}

// must returns b, nil on error.
func must(b []byte, _ error) []byte { return b }

// bigCutInput writes a Deltarobot session of 400,000 positions (a first
// reading of about a second) to a file.
func bigCutInput(t *testing.T) (path string, raw []byte) {
	raw = bigCapture(t, 400_000)
	path = filepath.Join(t.TempDir(), "in.pcap")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, raw
}

// TestCutInputChanged: an input that changes while it is cut (replaced
// by a recorder rotating its files, truncated, appended to, or rewritten
// in place with its size and modification time as they were) is refused:
// exit status 1, a line saying the input changed, no -w file. Before,
// the second reading copied whatever packets it found at the marked
// positions, with exit status 0.
func TestCutInputChanged(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, path string, raw []byte)
	}{
		{"replaced", func(t *testing.T, path string, raw []byte) {
			// Another capture renamed over it, as a recorder rotates.
			tmp := path + ".new"
			if err := os.WriteFile(tmp, laterBy(t, raw, 3600), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", func(t *testing.T, path string, raw []byte) {
			if err := os.Truncate(path, int64(len(raw)/2)); err != nil {
				t.Fatal(err)
			}
		}},
		{"appended", func(t *testing.T, path string, raw []byte) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, recs := splitPcap(t, laterBy(t, raw, 3600))
			for _, r := range recs[:100] {
				f.Write(r)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"rewritten in place, modification time restored", func(t *testing.T, path string, raw []byte) {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(laterBy(t, raw, 1), 0); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, raw := bigCutInput(t)
			out := filepath.Join(t.TempDir(), "cut.pcapng")
			cmd, stderr := startStopped(t, in, []string{"-r", in, "-Y", cutFilter, "-w", out})
			c.change(t, in, raw)
			cmd.Process.Signal(syscall.SIGCONT)
			code := exitOf(t, cmd)
			e := stderr.String()
			if code != exitError || !regexp.MustCompile(`(?m)^dissect: `+regexp.QuoteMeta(out)+`: no cut written: the input changed.* \(the file is removed\)$`).MatchString(e) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, the input changed, no cut written", code, e, exitError)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a cut of a changed input was left in %s", out)
			}
		})
	}
}

// TestCutSignal: SIGTERM in either reading of a cut stops it at once
// with the summary and exit status 143, and no cut is left, the line
// about -w saying so. The second reading is caught by writing the cut to
// a named pipe that the test stops reading: dissect is then blocked
// writing its copy; the signal comes, the pipe is read again.
func TestCutSignal(t *testing.T) {
	in, _ := bigCutInput(t)
	t.Run("first reading", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "cut.pcapng")
		cmd, stderr := startStopped(t, in, []string{"-r", in, "-Y", cutFilter, "-w", out})
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Process.Signal(syscall.SIGCONT)
		code := exitOf(t, cmd)
		e := stderr.String()
		if code != 143 || !strings.Contains(e, "== dissect summary ==") || !strings.Contains(e, "dissect: "+out+": no cut written: stopped by SIGTERM while the input was read, before the copy (the file is removed)") {
			t.Errorf("exit %d, stderr:\n%s\nwant 143, the summary and no cut written", code, e)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("a cut stopped in its first reading was left in %s", out)
		}
	})
	t.Run("second reading", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "cut.pcapng")
		if err := syscall.Mkfifo(out, 0o600); err != nil {
			t.Skipf("no named pipes here: %v", err)
		}
		// Every position is kept: the copy is most of the input.
		cmd, stderr := childCmd(t, []string{"-r", in, "-Y", `type == "actuator_position"`, "-w", out}, nil)
		r, err := os.Open(out) // the child's open of its -w returns now
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		// The first byte comes with the copy's first buffer: the second
		// reading has begun, and blocks once the pipe is full.
		if _, err := r.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		time.Sleep(50 * time.Millisecond) // not needed for the result: the signal is caught while the write blocks, or after
		var copied bytes.Buffer
		copied.ReadFrom(r)
		code := exitOf(t, cmd)
		e := stderr.String()
		m := regexp.MustCompile(`no cut written: stopped by SIGTERM during the copy, after (\d+) of (\d+) marked packets`).FindStringSubmatch(e)
		if code != 143 || !strings.Contains(e, "== dissect summary ==") || m == nil {
			t.Fatalf("exit %d, stderr:\n%s\nwant 143, the summary and no cut written", code, e)
		}
		if n, _ := strconv.Atoi(m[1]); m[1] == m[2] || n == 0 {
			t.Errorf("%s of %s marked packets copied: want the copy stopped in the middle", m[1], m[2])
		}
		if copied.Len() >= 8<<20 {
			t.Errorf("%d bytes copied after the signal: the copy was not stopped", copied.Len())
		}
	})
}

// emptyPacketsThen writes a zstd-compressed pcap of n empty packets
// followed by the packets of the capture tail (a little-endian
// microsecond pcap of pcapDir), as a few kilobytes: a frame of empty
// packets compressed once is repeated (zstd frames may be concatenated).
func emptyPacketsThen(t *testing.T, n int64, tail string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(pcapDir, tail))
	if err != nil {
		t.Fatal(err)
	}
	hdr, recs := splitPcap(t, raw)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	path := filepath.Join(t.TempDir(), "empty.pcap.zst")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Write(enc.EncodeAll(hdr, nil))
	// Empty packets, 10 s before the tail's first.
	rec := make([]byte, 16)
	binary.LittleEndian.PutUint32(rec, binary.LittleEndian.Uint32(recs[0])-10)
	const per = 1 << 20
	chunk := bytes.Repeat(rec, per)
	frame := enc.EncodeAll(chunk, nil)
	for ; n >= per; n -= per {
		if _, err := f.Write(frame); err != nil {
			t.Fatal(err)
		}
	}
	f.Write(enc.EncodeAll(chunk[:16*n], nil))
	f.Write(enc.EncodeAll(bytes.Join(recs, nil), nil))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// longCutTime is what a cut of 2^31 empty packets may take on a loaded
// 2-core machine (16 minutes measured, under 5 on a quiet one).
const longCutTime = 30 * time.Minute

// TestCutMemoryByRuns: a cut's marks cost memory by runs of marked
// packets, not by the packets read: a capture of many empty packets with
// one passing record at its end is cut in under 100 MB (the child's peak
// resident size), and the cut holds the packets a cut of that record's
// capture alone holds. The capture has 2 G packets (749 MB
// before, a bit a packet doubled by append): with DISSECT_FULL_CUT=1 (the
// line of .ci/run that runs this test alone) and a test timeout of at
// least longCutTime, 2^31 packets; otherwise 20 M. Under the race detector (its shadow memory doubles a
// process's) 2 M, the cut checked, not the peak.
func TestCutMemoryByRuns(t *testing.T) {
	n := int64(20_000_000)
	if raceDetector {
		n = 2_000_000
	}
	if os.Getenv("DISSECT_FULL_CUT") == "1" && !raceDetector {
		if d, ok := t.Deadline(); ok && time.Until(d) < longCutTime {
			t.Logf("DISSECT_FULL_CUT=1, but less than %v left before the test timeout: 20 M packets (DISSECT_FULL_CUT=1 go test -timeout 60m -run TestCutMemoryByRuns for 2^31)", longCutTime)
		} else {
			n = 1 << 31
		}
	}
	const filter = `type == "vrpn_Base pong_message"`
	in := emptyPacketsThen(t, n, "vrpn_tcp_only.pcap")
	dir := t.TempDir()
	_, alone, code := cli(t, "-r", filepath.Join(pcapDir, "vrpn_tcp_only.pcap"), "-Y", filter, "-w", filepath.Join(dir, "alone.pcapng"))
	want := regexp.MustCompile(`: (\d+) of \d+ packets written`).FindStringSubmatch(alone)
	if code != exitOK || want == nil {
		t.Fatalf("the cut of vrpn_tcp_only.pcap: exit %d: %s", code, alone)
	}
	out := filepath.Join(dir, "cut.pcapng")
	status := filepath.Join(dir, "status")
	cmd, stderr := childCmd(t, []string{"-r", in, "-Y", filter, "-w", out}, func(cmd *exec.Cmd) {
		cmd.Env = append(cmd.Env, helperPeakEnv+"="+status)
	})
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	got := regexp.MustCompile(`: (\d+) of (\d+) packets written`).FindStringSubmatch(stderr.String())
	if got == nil || got[1] != want[1] || got[2] != strconv.FormatInt(n+55, 10) {
		t.Errorf("the cut: %s\nwant %s of %d packets written", stderr, want[1], n+55)
	}
	m := regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB$`).FindSubmatch(must(os.ReadFile(status)))
	if m == nil {
		t.Skip("no peak resident size of the child here (/proc/self/status)")
	}
	peak, _ := strconv.ParseInt(string(m[1]), 10, 64)
	peak <<= 10
	t.Logf("%d packets cut, peak resident size %d MB", n+55, peak>>20)
	if peak >= 100<<20 && !raceDetector {
		t.Errorf("a cut of %d packets with one passing record took %d MB; want under 100 MB", n+55, peak>>20)
	}
}

// TestWriteCountsWhatReachedTheFile: the count of packets -w wrote is of
// those that reached the file, not those handed to its buffer: on
// /dev/full none (before: "55 of 55 packets written"), with the write
// error and exit status 1, for a copy and a cut; on a file system that
// fills up (a 256 KiB tmpfs, root only) the packets before it, as many as
// the file holds whole.
func TestWriteCountsWhatReachedTheFile(t *testing.T) {
	in := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	if _, err := os.Stat("/dev/full"); err == nil {
		for _, args := range [][]string{{"-r", in, "-w", "/dev/full"}, {"-r", in, "-Y", `type == "vrpn_Base pong_message"`, "-w", "/dev/full"}} {
			_, stderr, code := cli(t, args...)
			if code != exitError || !strings.Contains(stderr, "dissect: /dev/full: 0 of 55 packets written\n") || !strings.Contains(stderr, "no space left on device") {
				t.Errorf("%q: exit %d, stderr:\n%s\nwant exit 1, 0 of 55 packets written and the error", args, code, stderr)
			}
		}
	}
	t.Run("a file system that fills up", func(t *testing.T) {
		dir := tinyFS(t)
		out := filepath.Join(dir, "copy.pcapng")
		_, stderr, code := cli(t, "-r", bigInput(t), "-w", out)
		m := regexp.MustCompile(`: (\d+) of (\d+) packets written`).FindStringSubmatch(stderr)
		if code != exitError || m == nil || m[1] == "0" || m[1] == m[2] {
			t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 and some of the packets written", code, stderr)
		}
		_, back, _ := cli(t, "-q", out)
		if n := summaryPackets(t, back); strconv.Itoa(n) != m[1] {
			t.Errorf("%s packets counted written, the file holds %d whole", m[1], n)
		}
	})
}

// TestEnded holds ended, which startStopped relies on, to a process
// running and to one exited but not waited for.
func TestEnded(t *testing.T) {
	run := exec.Command("sleep", "30")
	done := exec.Command("true")
	for _, c := range []*exec.Cmd{run, done} {
		if err := c.Start(); err != nil {
			t.Skipf("%v: %v", c, err)
		}
	}
	defer run.Process.Kill()
	if ended(strconv.Itoa(run.Process.Pid)) {
		t.Error("ended: true for a running process")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !ended(strconv.Itoa(done.Process.Pid)) {
		if time.Now().After(deadline) {
			t.Fatal("ended: false for a process that exited 10 s ago")
		}
		time.Sleep(10 * time.Millisecond)
	}
	done.Wait()
	run.Process.Kill()
	run.Wait()
	if !ended(strconv.Itoa(run.Process.Pid)) {
		t.Error("ended: false for a process killed and waited for")
	}
}
