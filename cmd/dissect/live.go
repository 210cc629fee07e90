package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/capture/live"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/pipeline"
)

// liveOpts are the flags of live capture, on the root command (dissect -i
// eth0) and on 'dissect live'.
type liveOpts struct {
	iface     string
	filter    string
	write     string
	format    string // -F
	ring      []string
	count     int64
	autostop  []string
	list      bool
	snaplen   int
	bufferMiB int
	noPromisc bool
	idle      time.Duration
	queue     int
	method    string
}

// liveFlagNames are the flags that only make sense with -i.
var liveFlagNames = []string{"filter", "write", "write-format", "ring-buffer", "autostop", "snapshot-length", "buffer-size", "no-promiscuous-mode", "idle", "decode-queue", "capture-method"}

func addLiveFlags(cmd *cobra.Command, o *liveOpts) {
	f := cmd.Flags()
	f.StringVarP(&o.iface, "interface", "i", "", "capture live on this network interface: a name, or its number in the -D list (1: the first), or \"any\" for all; instead of reading files")
	f.StringVarP(&o.filter, "filter", "f", "", "capture filter in tcpdump syntax: live, run in the kernel; with files (-r), run on each packet read, the others ignored as if never captured: \"tcp port 3883 or udp port 3883\"")
	f.StringVarP(&o.write, "write", "w", "", writeUsage)
	addFormatFlag(cmd, &o.format)
	addRingFlag(cmd, &o.ring)
	f.Int64VarP(&o.count, "count", "c", 0, countUsage)
	f.StringArrayVarP(&o.autostop, "autostop", "a", nil, "live: stop when a condition is met, tshark style: duration:SECONDS or packets:N; may be repeated (the first met stops)")
	f.BoolVarP(&o.list, "list-interfaces", "D", false, "list the network interfaces that can be captured, and exit")
	f.IntVarP(&o.snaplen, "snapshot-length", "s", live.DefaultSnaplen, "live: keep at most this many bytes of each packet (0: the maximum, 262144)")
	f.IntVarP(&o.bufferMiB, "buffer-size", "B", live.DefaultBufferSize>>20, "live: kernel receive buffer in MiB; raise it if the kernel drops packets")
	f.BoolVarP(&o.noPromisc, "no-promiscuous-mode", "p", false, "live: do not put the interface in promiscuous mode (see only this host's traffic)")
	f.DurationVar(&o.idle, "idle", 5*time.Minute, "live: end streams with no packet for this long, so memory stays bounded over long captures (0: never)")
	addQueueFlag(cmd, &o.queue)
	f.StringVar(&o.method, "capture-method", "auto", "live: how packets are read: auto, ring (TPACKET_V3) or socket (recvmsg)")
	_ = f.MarkHidden("capture-method")
}

// addRingFlag adds -b, the ring buffer of -w files.
func addRingFlag(cmd *cobra.Command, v *[]string) {
	cmd.Flags().StringArrayVarP(v, "ring-buffer", "b", nil, "with -w: go on in a new file, tshark style: filesize:KB (1 kB = 1000 bytes), duration:SECONDS or packets:N, and keep the newest files:N; may be repeated (the first met switches). Files are named as dumpcap names them: -w rig.pcapng gives rig_00001_YYYYMMDDhhmmss.pcapng, ...")
}

// ring checks -b against -w and parses it.
func ring(opts []string, write string) (pipeline.Ring, error) {
	if len(opts) > 0 && write == "" {
		return pipeline.Ring{}, usageError{errors.New("-b needs -w: the ring buffer is made of -w files")}
	}
	r, err := pipeline.ParseRing(opts)
	if err != nil {
		return r, usageError{err}
	}
	return r, nil
}

// addQueueFlag adds the hidden flag that bounds the queue between capture
// and decoding (for tests of what happens when it overflows).
func addQueueFlag(cmd *cobra.Command, v *int) {
	cmd.Flags().IntVar(v, "decode-queue", 0, "bytes of packets queued for decoding (0: 64 MiB)")
	_ = cmd.Flags().MarkHidden("decode-queue")
}

// liveRequested reports whether the root command was asked for live
// capture (-i or -D), and rejects live-only flags without -i.
func liveRequested(cmd *cobra.Command, o *liveOpts) (bool, error) {
	if o.iface != "" || o.list {
		return true, nil
	}
	for _, name := range liveFlagNames {
		if cmd.Flags().Changed(name) && !fileFlagNames[name] {
			return false, usageError{fmt.Errorf("--%s applies to live capture: give an interface with -i (dissect -D lists them)", name)}
		}
	}
	return false, nil
}

func newLiveCmd(stderr io.Writer) *cobra.Command {
	ro := &readOpts{}
	lo := &liveOpts{}
	cmd := &cobra.Command{
		Use:   "live -i INTERFACE [flags]",
		Short: "Decode live traffic from a network interface (the same as 'dissect -i INTERFACE')",
		Long: `live captures packets from a network interface and decodes them as they arrive,
with the same reassembly, protocols and output as for capture files. Output is
written record by record, so it can be piped (dissect -i lo -o json | jq).

Ctrl-C (or SIGTERM), -c or -a stop the capture: streams still open are ended,
the -w file is closed and the summary, with the packets dropped by the kernel,
goes to stderr. Linux only; it needs root or the CAP_NET_RAW capability.`,
		Example: `  dissect -D                                      # list the interfaces
  dissect -i eth0 -f "tcp port 3883 or udp port 3883"
  dissect live -i lo -o json | jq -c 'select(.proto == "vrpn")'
  dissect -i eth0 -d tcp.port==4000,deltarobot -w run.pcapng -a duration:60
  sudo setcap cap_net_raw,cap_net_admin=eip $(which dissect)   # capture without sudo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLive(cmd, ro, lo, stderr)
		},
	}
	addReadFlags(cmd, ro)
	_ = cmd.Flags().MarkHidden("read")
	_ = cmd.Flags().MarkHidden("progress")
	addLiveFlags(cmd, lo)
	return cmd
}

// stopRule is when a capture ends by itself.
type stopRule struct {
	duration time.Duration // 0: none
	packets  int64         // 0: none
}

// parseAutostop parses tshark's -a conditions: duration:SECONDS (a number,
// or a Go duration such as 1m30s) and packets:N.
func parseAutostop(conds []string, count int64) (stopRule, error) {
	var r stopRule
	if count < 0 {
		return r, fmt.Errorf("-c %d: want a number of packets, at least 1 (0: no limit)", count)
	}
	r.packets = count
	for _, c := range conds {
		key, val, ok := strings.Cut(c, ":")
		if !ok {
			return r, fmt.Errorf("-a %q: want duration:SECONDS or packets:N", c)
		}
		switch key {
		case "duration":
			d, err := parseSeconds(val)
			if err != nil {
				return r, fmt.Errorf("-a %q: %v", c, err)
			}
			if r.duration == 0 || d < r.duration {
				r.duration = d
			}
		case "packets":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 1 {
				return r, fmt.Errorf("-a %q: want a number of packets, at least 1", c)
			}
			if r.packets == 0 || n < r.packets {
				r.packets = n
			}
		default:
			return r, fmt.Errorf("-a %q: condition %q is not supported; use duration:SECONDS or packets:N", c, key)
		}
	}
	return r, nil
}

func parseSeconds(s string) (time.Duration, error) {
	var d time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f <= 0 || f > 1e9 {
			return 0, errors.New("want a positive number of seconds")
		}
		d = time.Duration(f * float64(time.Second))
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, errors.New("want a number of seconds (or a duration such as 1m30s)")
		}
	}
	if d <= 0 {
		return 0, errors.New("want a positive duration")
	}
	return d, nil
}

// liveConfig validates the live flags and turns them into a configuration.
func (o *liveOpts) config() (live.Config, stopRule, error) {
	var cfg live.Config
	rule, err := parseAutostop(o.autostop, o.count)
	if err != nil {
		return cfg, rule, usageError{err}
	}
	if o.snaplen < 0 || o.snaplen > live.DefaultSnaplen {
		return cfg, rule, usageError{fmt.Errorf("-s %d: want 1 to %d bytes (0: %d)", o.snaplen, live.DefaultSnaplen, live.DefaultSnaplen)}
	}
	if o.bufferMiB < 1 || o.bufferMiB > 2047 {
		return cfg, rule, usageError{fmt.Errorf("-B %d: want 1 to 2047 MiB", o.bufferMiB)}
	}
	if o.idle < 0 {
		return cfg, rule, usageError{fmt.Errorf("--idle %v: want a positive duration (0: never)", o.idle)}
	}
	var method live.Method
	switch o.method {
	case "auto":
		method = live.MethodAuto
	case "ring":
		method = live.MethodRing
	case "socket":
		method = live.MethodSocket
	default:
		return cfg, rule, usageError{fmt.Errorf("--capture-method %q: want auto, ring or socket", o.method)}
	}
	cfg = live.Config{
		Method:        method,
		Filter:        o.filter,
		Snaplen:       uint32(o.snaplen),
		BufferSize:    o.bufferMiB << 20,
		NoPromiscuous: o.noPromisc,
		Timeout:       tick,
	}
	return cfg, rule, nil
}

// tick is how often a capture with no traffic wakes up to look at the
// clock, the kernel's drop counter and idle streams; a stop waits at most
// this long for packets still in the kernel's buffer.
const tick = 100 * time.Millisecond

// liveError turns an error of live.Open into the message for the user.
func liveError(name string, err error) error {
	var fe *live.FilterError
	switch {
	case errors.As(err, &fe):
		return usageError{fe}
	case errors.Is(err, live.ErrNoSuchInterface):
		return fmt.Errorf("%s: no such interface (dissect -D lists them)", name)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%s: permission denied: run as root or grant CAP_NET_RAW to the dissect binary (sudo setcap cap_net_raw,cap_net_admin=eip $(which dissect))", name)
	case errors.Is(err, live.ErrInterfaceDown):
		return fmt.Errorf("%s: the interface is down (bring it up first: sudo ip link set %s up)", name, name)
	case errors.Is(err, live.ErrUnsupported):
		return live.ErrUnsupported
	}
	return err
}

// resolveInterface accepts, as tshark does, the number of an interface in
// the -D list (1 is the first listed) when no interface has that name.
func resolveInterface(name string) string {
	if _, err := net.InterfaceByName(name); err == nil {
		return name
	}
	n, err := strconv.Atoi(name)
	if err != nil || n < 1 {
		return name
	}
	if ifs, err := live.Interfaces(); err == nil && n <= len(ifs) {
		return ifs[n-1].Name
	}
	return name
}

func runLive(cmd *cobra.Command, ro *readOpts, lo *liveOpts, stderr io.Writer) error {
	stdout := cmd.OutOrStdout()
	if lo.list {
		return listInterfaces(stdout)
	}
	if lo.iface == "" {
		return usageError{errors.New("no interface given: -i NAME (dissect -D lists them)")}
	}
	if len(ro.files) > 0 {
		return usageError{errors.New("-r reads capture files and -i captures live: give one of them")}
	}
	cfg, rule, err := lo.config()
	if err != nil {
		return err
	}
	rb, err := ring(lo.ring, lo.write)
	if err != nil {
		return err
	}
	if err := checkWrite(lo, stdout); err != nil {
		return err
	}
	if lo.format == "pcap" {
		return usageError{errors.New("-F pcap: a live capture is written as pcapng (with the capture's statistics); -r FILE -w OUT -F pcap converts it")}
	}
	if lo.write == "-" {
		// The capture takes stdout, as tshark -w - does: the records
		// go to --out FILE, or nowhere (the summary is on stderr).
		if rb.Active() {
			return usageError{errors.New("-w - with -b: a ring of files needs a file name")}
		}
		if ro.outPath == "" {
			for _, name := range []string{"output", "details", "tshark-output", "field", "hex"} {
				if cmd.Flags().Changed(name) {
					return usageError{fmt.Errorf("-w - writes the capture to stdout: the records of --%s go to --out FILE", name)}
				}
			}
			ro.quiet = true
		}
	}
	ro.fox.stderr = stderr
	reg, out, err := ro.setup(stdout)
	if err != nil {
		return err
	}
	stopProfile, err := ro.startProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	ctx, abort, stopSignals := catchSignals(cmd.Context())
	defer stopSignals()
	name := resolveInterface(lo.iface)
	src, err := live.Open(name, cfg)
	if err != nil {
		return liveError(name, err)
	}
	defer src.Close()
	it := src.Interface()

	lc := &pipeline.LiveConfig{
		Name:       it.Name,
		Packets:    rule.packets,
		Duration:   rule.duration,
		Idle:       lo.idle,
		QueueBytes: lo.queue,
		Abort:      abort,
		TimeoutErr: live.ErrTimeout,
		Warn:       func(msg string) { fmt.Fprintf(stderr, "dissect: warning: %s\n", msg) },
		Kernel: func() (pipeline.KernelStats, error) {
			st, err := src.Stats()
			return pipeline.KernelStats{PassedFilter: st.Received, Dropped: st.Dropped}, err
		},
	}
	switch {
	case lo.write == "-":
		out, ok := stdout.(*os.File)
		if !ok {
			return errors.New("-w -: stdout is not a file")
		}
		if lc.Save, err = pipeline.NewSave(out, it.Name, src.LinkType(), src.Snaplen()); err != nil {
			return err
		}
	case lo.write != "":
		if lc.Save, err = pipeline.CreateSave(lo.write, it.Name, src.LinkType(), src.Snaplen(), rb); err != nil {
			return err
		}
	}
	desc := fmt.Sprintf("%s (%s", it.Name, live.LinkTypeName(src.LinkType()))
	if lo.filter != "" {
		desc += fmt.Sprintf(", filter %q", lo.filter)
	}
	fmt.Fprintf(stderr, "dissect: capturing on %s); Ctrl-C stops\n", desc)
	return runCapture(ctx, ro, reg, out, src, lc, stderr)
}

// runCapture runs a live capture or serial tap through the pipeline. ctx
// and lc.Abort come from catchSignals: the first Ctrl-C (SIGTERM, SIGHUP) stops
// the capture and decodes what was captured, a second one ends the run at
// once.
func runCapture(ctx context.Context, ro *readOpts, reg *dissect.Registry, out sink, src capture.Source, lc *pipeline.LiveConfig, stderr io.Writer) error {
	cfg := ro.pipelineConfig(reg, out)
	cfg.Live = lc
	sum, err := pipeline.Run(ctx, src, cfg)
	return ro.endRun(stderr, out, sum, err)
}

// catchSignals returns a context cancelled by the first SIGINT, SIGTERM or
// SIGHUP (a terminal closed) and a channel closed by the second. While it
// runs, a write to a closed pipe fails with EPIPE instead of killing the
// program (dissect -i eth0 | head), so the capture ends as on Ctrl-C and
// -w is complete.
func catchSignals(parent context.Context) (ctx context.Context, abort <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	ab := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals...)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		n := 0
		for {
			select {
			case <-sigs:
				n++
				if n == 1 {
					cancel()
				} else {
					close(ab)
					return
				}
			case <-done:
				return
			}
		}
	}()
	return ctx, ab, func() {
		signal.Stop(sigs)
		signal.Stop(pipe)
		close(done)
		<-finished
		cancel()
	}
}

// listInterfaces prints the interfaces like tshark -D: number (its place in
// the list, which -i accepts), name, flags, link type, addresses.
func listInterfaces(w io.Writer) error {
	ifs, err := live.Interfaces()
	if err != nil {
		return err
	}
	for i, it := range ifs {
		var b strings.Builder
		fmt.Fprintf(&b, "%d. %s", i+1, it.Name)
		if it.Name == live.AnyInterface && it.Index == 0 {
			b.WriteString(" (pseudo-interface: every interface; Linux cooked v2)")
		} else {
			var attrs []string
			if it.Flags&net.FlagUp == 0 {
				attrs = append(attrs, "down")
			}
			if it.Flags != 0 {
				attrs = append(attrs, strings.ReplaceAll(it.Flags.String(), "|", ", "))
			}
			if live.Supported {
				attrs = append(attrs, live.LinkTypeName(it.LinkType))
			}
			fmt.Fprintf(&b, " (%s)", strings.Join(attrs, "; "))
			if len(it.HardwareAddr) > 0 {
				fmt.Fprintf(&b, " %s", it.HardwareAddr)
			}
			for _, a := range it.Addrs {
				fmt.Fprintf(&b, " %s", a)
			}
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// rootLive runs live capture for the root command when -i or -D is given
// (dissect -i eth0); handled is false when the root command reads files.
func rootLive(cmd *cobra.Command, ro *readOpts, lo *liveOpts, args []string, stderr io.Writer) (handled bool, err error) {
	ok, err := liveRequested(cmd, lo)
	if err != nil || !ok {
		return err != nil, err
	}
	if len(args) > 0 {
		if lo.iface == "" {
			return true, usageError{fmt.Errorf("-D lists the interfaces and reads no file (%q)", args[0])}
		}
		return true, usageError{fmt.Errorf("-i captures live and %q is a capture file: give one of them", args[0])}
	}
	return true, runLive(cmd, ro, lo, stderr)
}
