package live

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// TestMeasureLoopback measures how fast each method captures 18-byte UDP
// datagrams on loopback, and tcpdump (when installed) with the same
// buffer. It asserts nothing about speed and runs only when asked:
//
//	DISSECT_LIVE_MEASURE=1 go test -run MeasureLoopback -v ./capture/live/
//
// DISSECT_LIVE_RATES lists the sending rates in datagrams/s (0: as fast as
// the sender goes; default "0"), DISSECT_LIVE_BUFFER the buffer in MiB
// (default 8), DISSECT_LIVE_SECONDS how long each rate is sent (default 2).
func TestMeasureLoopback(t *testing.T) {
	if os.Getenv("DISSECT_LIVE_MEASURE") == "" {
		t.Skip("set DISSECT_LIVE_MEASURE=1 to measure")
	}
	rates := []int{0}
	if v := os.Getenv("DISSECT_LIVE_RATES"); v != "" {
		rates = nil
		for _, f := range strings.Split(v, ",") {
			r, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			rates = append(rates, r)
		}
	}
	bufMiB, secs := envInt(t, "DISSECT_LIVE_BUFFER", 8), envInt(t, "DISSECT_LIVE_SECONDS", 2)
	dur := time.Duration(secs) * time.Second
	tcpdump, _ := exec.LookPath("tcpdump")
	t.Logf("%-8s %10s %10s %10s %10s %8s %10s %8s", "reader", "rate", "sent/s", "captured", "dropped", "MB/s", "captured/s", "CPU µs/pkt")
	for _, rate := range rates {
		for _, m := range methods {
			rx, tx := udpPair(t)
			s := openLoopback(t, Config{Filter: fmt.Sprintf("udp dst port %d", portOf(rx)), BufferSize: bufMiB << 20,
				Timeout: DrainTimeout, Method: m})
			counted := make(chan [3]int)
			go func() {
				// The reader's own CPU time: its thread, locked to it.
				runtime.LockOSThread()
				cpu0 := threadCPU()
				var n, bytes int
				for {
					p, err := s.Next()
					if err != nil {
						if err != io.EOF {
							t.Errorf("%v: %v", m, err)
						}
						counted <- [3]int{n, bytes, int(threadCPU() - cpu0)}
						return
					}
					n++
					bytes += len(p.Data)
				}
			}()
			sent, took := blast(t, tx, rate, dur)
			s.Stop()
			got := <-counted
			st, _ := s.Stats()
			s.Close()
			t.Logf("%-8v %10d %10.0f %10d %10d %8.1f %10.0f %8.2f", m, rate, float64(sent)/took.Seconds(), got[0], st.Dropped,
				float64(got[1])/took.Seconds()/1e6, float64(got[0])/took.Seconds(), float64(got[2])/1e3/float64(max(got[0], 1)))
		}
		if tcpdump == "" {
			continue
		}
		rx, tx := udpPair(t)
		cmd := exec.Command(tcpdump, "-i", loopbackName(t), "-n", "-w", "/dev/null", "-B", strconv.Itoa(bufMiB<<10),
			fmt.Sprintf("udp dst port %d", portOf(rx)))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // tcpdump prints "listening on" once its filter is set
		sent, took := blast(t, tx, rate, dur)
		time.Sleep(200 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		c, d := tcpdumpCount(stderr.String(), "captured"), tcpdumpCount(stderr.String(), "dropped by kernel")
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
		t.Logf("%-8s %10d %10.0f %10d %10d %8.1f %10.0f %8.2f", "tcpdump", rate, float64(sent)/took.Seconds(), c, d,
			float64(c*60)/took.Seconds()/1e6, float64(c)/took.Seconds(), float64(cpu.Microseconds())/float64(max(c, 1)))
	}
}

// threadCPU is the CPU time of the calling thread, in ns.
func threadCPU() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return unix.TimevalToNsec(ru.Utime) + unix.TimevalToNsec(ru.Stime)
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

var tcpdumpLine = regexp.MustCompile(`(\d+) packets? (captured|received by filter|dropped by kernel)`)

func tcpdumpCount(out, what string) int {
	for _, m := range tcpdumpLine.FindAllStringSubmatch(out, -1) {
		if m[2] == what {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return -1
}

// blast sends 18-byte datagrams on tx, 64 per sendmmsg, at rate per
// second (0: as fast as possible) for dur, and returns how many it sent
// and how long it took.
func blast(t *testing.T, tx *net.UDPConn, rate int, dur time.Duration) (int, time.Duration) {
	pc := ipv4.NewPacketConn(tx)
	msgs := make([]ipv4.Message, 64)
	for i := range msgs {
		msgs[i].Buffers = [][]byte{[]byte("0123456789abcdefgh")}
	}
	start := time.Now()
	sent := 0
	for {
		el := time.Since(start)
		if el >= dur {
			return sent, el
		}
		if rate > 0 && sent >= int(el.Seconds()*float64(rate)) {
			time.Sleep(50 * time.Microsecond)
			continue
		}
		n, err := pc.WriteBatch(msgs, 0)
		if err != nil {
			t.Fatal(err)
		}
		sent += n
	}
}
