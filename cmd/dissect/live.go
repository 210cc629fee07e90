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

	"dissect/capture"
	"dissect/capture/live"
	"dissect/dissect"
	"dissect/dissect/engine"
	"dissect/dissect/output"
)

// liveOpts are the flags of live capture, on the root command (dissect -i
// eth0) and on 'dissect live'.
type liveOpts struct {
	iface     string
	filter    string
	write     string
	count     int64
	autostop  []string
	list      bool
	snaplen   int
	bufferMiB int
	noPromisc bool
	idle      time.Duration
}

// liveFlagNames are the flags that only make sense with -i.
var liveFlagNames = []string{"filter", "write", "count", "autostop", "snapshot-length", "buffer-size", "no-promiscuous-mode", "idle"}

func addLiveFlags(cmd *cobra.Command, o *liveOpts) {
	f := cmd.Flags()
	f.StringVarP(&o.iface, "interface", "i", "", "capture live on this network interface (a name, or a number from -D; \"any\" for all), instead of reading files")
	f.StringVarP(&o.filter, "filter", "f", "", "live capture filter in tcpdump syntax, run in the kernel: \"tcp port 3883 or udp port 3883\"")
	f.StringVarP(&o.write, "write", "w", "", "live: also save the captured packets to this pcapng file")
	f.Int64VarP(&o.count, "count", "c", 0, "live: stop after this many packets (0: no limit)")
	f.StringArrayVarP(&o.autostop, "autostop", "a", nil, "live: stop when a condition is met, tshark style: duration:SECONDS or packets:N; may be repeated (the first met stops)")
	f.BoolVarP(&o.list, "list-interfaces", "D", false, "list the network interfaces that can be captured, and exit")
	f.IntVarP(&o.snaplen, "snapshot-length", "s", live.DefaultSnaplen, "live: keep at most this many bytes of each packet (0: the maximum, 262144)")
	f.IntVarP(&o.bufferMiB, "buffer-size", "B", live.DefaultBufferSize>>20, "live: kernel receive buffer in MiB; raise it if the kernel drops packets")
	f.BoolVarP(&o.noPromisc, "no-promiscuous-mode", "p", false, "live: do not put the interface in promiscuous mode (see only this host's traffic)")
	f.DurationVar(&o.idle, "idle", 5*time.Minute, "live: end streams with no packet for this long, so memory stays bounded over long captures (0: never)")
}

// liveRequested reports whether the root command was asked for live
// capture (-i or -D), and rejects live-only flags without -i.
func liveRequested(cmd *cobra.Command, o *liveOpts) (bool, error) {
	if o.iface != "" || o.list {
		return true, nil
	}
	for _, name := range liveFlagNames {
		if cmd.Flags().Changed(name) {
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
	cfg = live.Config{
		Filter:        o.filter,
		Snaplen:       uint32(o.snaplen),
		BufferSize:    o.bufferMiB << 20,
		NoPromiscuous: o.noPromisc,
		Timeout:       tick,
	}
	return cfg, rule, nil
}

// tick is how often a capture with no traffic wakes up to look at the
// clock, the kernel's drop counter and idle streams.
const tick = 250 * time.Millisecond

// housekeeping is how often streams are expired, the kernel's counters
// read and the -w file flushed.
const housekeeping = time.Second

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

// resolveInterface accepts an interface number from -D for a name, as
// tshark does, when no interface has that name.
func resolveInterface(name string) string {
	if _, err := net.InterfaceByName(name); err == nil {
		return name
	}
	if n, err := strconv.Atoi(name); err == nil && n > 0 {
		if ni, err := net.InterfaceByIndex(n); err == nil {
			return ni.Name
		}
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
	reg, out, err := ro.setup(stdout, true)
	if err != nil {
		return err
	}
	stopProfile, err := ro.startProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	name := resolveInterface(lo.iface)
	src, err := live.Open(name, cfg)
	if err != nil {
		return liveError(name, err)
	}
	defer src.Close()
	it := src.Interface()

	var save *liveSave
	if lo.write != "" {
		if save, err = createLiveSave(lo.write, it.Name, src.LinkType(), src.Snaplen()); err != nil {
			return err
		}
		defer save.close()
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	// When the reader of stdout goes away (dissect -i eth0 | head), writes
	// fail with EPIPE instead of killing the program, so the capture ends
	// as on Ctrl-C and the -w file is complete.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	defer stop()
	// Ctrl-C closes the socket, which wakes Next at once.
	stopClose := context.AfterFunc(ctx, func() { src.Close() })
	defer stopClose()

	desc := fmt.Sprintf("%s (%s", it.Name, live.LinkTypeName(src.LinkType()))
	if lo.filter != "" {
		desc += fmt.Sprintf(", filter %q", lo.filter)
	}
	fmt.Fprintf(stderr, "dissect: capturing on %s); Ctrl-C stops\n", desc)

	e := engine.New(engine.Config{Registry: reg, Decode: !ro.quiet, CountOnly: ro.quiet}, sinkOrNil(out))
	start := time.Now()
	var deadline time.Time
	if rule.duration > 0 {
		deadline = start.Add(rule.duration)
	}
	c := &captureLoop{src: src, e: e, save: save, stderr: stderr, idle: lo.idle, name: it.Name}
	runErr := c.loop(ctx, rule, deadline, start)
	stop() // a second Ctrl-C while finishing kills the program
	// Close first: the kernel's counters are read a last time, and no more
	// packets are buffered while the streams are flushed.
	src.Close()
	stats, _ := src.Stats()
	finErr := e.Finish()
	if out != nil && finErr == nil {
		finErr = out.Flush()
	}
	if finErr != nil && runErr == nil {
		runErr = &engine.ErrSink{Err: finErr}
	}
	var saveErr error
	if save != nil {
		saveErr = save.close()
	}
	if !ro.noSummary {
		output.WriteSummary(stderr, e.Summary(), time.Since(start))
		writeKernelSummary(stderr, it.Name, stats)
	}
	if errors.Is(runErr, syscall.EPIPE) {
		runErr = nil // the reader of the output is gone: a normal end
	}
	if runErr != nil {
		return runErr
	}
	return saveErr
}

func sinkOrNil(out sink) dissect.Sink {
	if out == nil {
		return nil
	}
	return out
}

// captureLoop is the state of one capture loop.
type captureLoop struct {
	src     *live.Source
	e       *engine.Engine
	save    *liveSave
	stderr  io.Writer
	idle    time.Duration
	name    string
	warned  bool
	packets int64
}

// loop feeds packets to the engine until a stop condition, the context's
// end (Ctrl-C) or a read error.
func (c *captureLoop) loop(ctx context.Context, rule stopRule, deadline, start time.Time) error {
	next := start.Add(housekeeping)
	for {
		if ctx.Err() != nil {
			return nil
		}
		p, err := c.src.Next()
		now := time.Now()
		switch {
		case err == nil:
		case errors.Is(err, live.ErrTimeout):
		case errors.Is(err, io.EOF): // closed by Ctrl-C
			return nil
		default:
			return err
		}
		if p != nil {
			if c.save != nil {
				if err := c.save.write(p); err != nil {
					return err
				}
			}
			if err := c.e.Packet(p); err != nil {
				return &engine.ErrSink{Err: err}
			}
			c.packets++
			if rule.packets > 0 && c.packets >= rule.packets {
				return nil
			}
		}
		if !deadline.IsZero() && !now.Before(deadline) {
			return nil
		}
		if !now.Before(next) {
			next = now.Add(housekeeping)
			if err := c.housekeeping(now); err != nil {
				return err
			}
		}
	}
}

// housekeeping runs about once a second: it ends idle streams, warns when
// the kernel starts dropping packets and flushes the -w file.
func (c *captureLoop) housekeeping(now time.Time) error {
	if c.idle > 0 {
		if err := c.e.Expire(now, c.idle); err != nil {
			return &engine.ErrSink{Err: err}
		}
	}
	if st, err := c.src.Stats(); err == nil && st.Dropped > 0 && !c.warned {
		c.warned = true
		fmt.Fprintf(c.stderr, "dissect: warning: the kernel dropped %d packets on %s (dissect is not keeping up): their bytes become gap records; raise -B, narrow -f or use -q\n", st.Dropped, c.name)
	}
	if c.save != nil {
		return c.save.flush()
	}
	return nil
}

// writeKernelSummary adds the capture counters to the summary.
func writeKernelSummary(w io.Writer, name string, st live.Stats) {
	fmt.Fprintf(w, "live:     %s: %d packets captured, %d passed the filter in the kernel, %d dropped by the kernel", name, st.Delivered, st.Received, st.Dropped)
	if st.Dropped > 0 {
		fmt.Fprint(w, " (receive buffer full: raise -B, narrow -f or use -q)")
	}
	fmt.Fprintln(w)
}

// liveSave is the -w output.
type liveSave struct {
	f    *os.File
	w    *capture.PcapngWriter
	path string
	done bool
}

func createLiveSave(path, ifname string, lt capture.LinkType, snaplen uint32) (*liveSave, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := capture.NewPcapngWriter(f)
	if err == nil {
		_, err = w.AddInterface(ifname, lt, snaplen)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &liveSave{f: f, w: w, path: path}, nil
}

func (s *liveSave) write(p *capture.Packet) error {
	q := *p
	q.Interface = 0
	if err := s.w.WritePacket(&q); err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return nil
}

func (s *liveSave) flush() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return nil
}

// close flushes and closes the file; later calls do nothing.
func (s *liveSave) close() error {
	if s.done {
		return nil
	}
	s.done = true
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return nil
}

// listInterfaces prints the interfaces like tshark -D: number (the
// interface index, which -i accepts), name, flags, link type, addresses.
func listInterfaces(w io.Writer) error {
	ifs, err := live.Interfaces()
	if err != nil {
		return err
	}
	for _, it := range ifs {
		var b strings.Builder
		if it.Index > 0 {
			fmt.Fprintf(&b, "%d. ", it.Index)
		} else {
			b.WriteString("-. ")
		}
		b.WriteString(it.Name)
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
