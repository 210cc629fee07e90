package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/capture/serial"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/pipeline"
)

// The extcap interface Wireshark lists.
const (
	extcapIface   = "dissect-serial"
	extcapDisplay = "dissect serial tap"
	extcapVersion = "1.0"
	extcapHelp    = "https://github.com/dissect-tools/dissect/blob/main/docs/serial.md"
	// extcapScript is the name of the wrapper --install writes.
	extcapScript = "dissect-extcap"
)

// serialAdapters lists the serial ports offered in Wireshark's dialog:
// USB adapters and on-board UARTs, not the legacy ttyS ports every PC has.
func serialAdapters() []string {
	var ports []string
	for _, pat := range []string{"/dev/ttyUSB*", "/dev/ttyACM*", "/dev/ttyAMA*", "/dev/serial/by-id/*", "/dev/tty.usb*", "/dev/cu.usb*"} {
		m, _ := filepath.Glob(pat)
		ports = append(ports, m...)
	}
	return ports
}

// extcapOpts are the flags of 'dissect extcap': Wireshark's and the tap's.
type extcapOpts struct {
	interfaces bool
	dlts       bool
	config     bool
	capture    bool
	iface      string
	version    string
	fifo       string
	filter     string
	install    bool
	dir        string
	serial     serialOpts
	ports      func() []string // the serial ports present, named in the dialog
}

// newExtcapCmd returns 'dissect extcap'; ports lists the serial ports
// present (serialAdapters).
func newExtcapCmd(stdout io.Writer, ports func() []string) *cobra.Command {
	o := &extcapOpts{ports: ports}
	cmd := &cobra.Command{
		Use:   "extcap [flags]",
		Short: "Wireshark extcap interface for serial taps (dissect extcap --install)",
		Long: `Capture a serial tap from Wireshark or tshark.

'dissect extcap --install' writes a small wrapper script, ` + extcapScript + `, into
your personal Wireshark extcap folder (or --dir) and says where. Wireshark
and tshark then list the interface "` + extcapIface + `" (` + extcapDisplay + `):
its options are the host-tx and device-tx ports, baud, data bits, parity and
stop bits, as for 'dissect serial'. Packets have link type 147 (USER0), one
per read, with the direction flag set (outbound host→device, inbound
device→host).

The other flags are Wireshark's extcap protocol (--extcap-interfaces,
--extcap-dlts, --extcap-config, --capture --fifo PATH); Wireshark runs the
wrapper with them. Unknown flags are ignored. A capture stops on SIGTERM
or SIGINT, or when the reader of the fifo goes away.`,
		Example: `  dissect extcap --install
  tshark -D | grep dissect
  tshark -i dissect-serial -o extcap.dissect_serial.hosttx:/dev/ttyUSB0 -w link.pcapng`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		FParseErrWhitelist: cobra.FParseErrWhitelist{
			UnknownFlags: true, // Wireshark may pass flags of newer versions
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExtcap(cmd.Context(), o, stdout)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.interfaces, "extcap-interfaces", false, "extcap: list the interfaces")
	f.StringVar(&o.version, "extcap-version", "", "extcap: Wireshark's version")
	f.BoolVar(&o.dlts, "extcap-dlts", false, "extcap: list the interface's link types")
	f.BoolVar(&o.config, "extcap-config", false, "extcap: list the interface's options")
	f.StringVar(&o.iface, "extcap-interface", "", "extcap: the interface")
	f.BoolVar(&o.capture, "capture", false, "extcap: capture into --fifo")
	f.StringVar(&o.fifo, "fifo", "", "extcap: the pipe (or file) to write pcapng to")
	f.StringVar(&o.filter, "extcap-capture-filter", "", "extcap: capture filter (not supported: ignored)")
	f.BoolVar(&o.install, "install", false, "install the wrapper "+extcapScript+" in the personal Wireshark extcap folder")
	f.StringVar(&o.dir, "dir", "", "with --install: the folder to install into, instead of Wireshark's personal extcap folder")
	s := &o.serial
	f.StringVar(&s.hostTx, "host-tx", "", "port whose RX is wired to the host's TX line (hears host→device bytes)")
	f.StringVar(&s.deviceTx, "device-tx", "", "port whose RX is wired to the device's TX line (hears device→host bytes)")
	f.IntVar(&s.baud, "baud", serial.DefaultMode().Baud, "line speed in bits per second")
	f.IntVar(&s.dataBits, "data-bits", serial.DefaultMode().DataBits, "data bits per character: 5, 6, 7 or 8")
	f.StringVar(&s.parity, "parity", serial.DefaultMode().Parity.String(), "parity: none, odd, even, mark or space")
	f.StringVar(&s.stopBits, "stop-bits", serial.DefaultMode().StopBits.String(), "stop bits: 1, 1.5 or 2")
	addQueueFlag(cmd, &s.queue)
	return cmd
}

func runExtcap(ctx context.Context, o *extcapOpts, stdout io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.install {
		return extcapInstall(o.dir, stdout)
	}
	if o.interfaces {
		_, err := fmt.Fprintf(stdout, "extcap {version=%s}{help=%s}\ninterface {value=%s}{display=%s}\n", extcapVersion, extcapHelp, extcapIface, extcapDisplay)
		return err
	}
	if !o.dlts && !o.config && !o.capture {
		return usageError{errors.New("no extcap phase given (--extcap-interfaces, --extcap-dlts, --extcap-config or --capture), nor --install")}
	}
	if o.iface != extcapIface {
		if o.iface == "" {
			return usageError{errors.New("--extcap-interface not given (the interface is " + extcapIface + ")")}
		}
		return usageError{fmt.Errorf("--extcap-interface %q: unknown interface (the interface is %s)", o.iface, extcapIface)}
	}
	switch {
	case o.dlts:
		_, err := fmt.Fprintf(stdout, "dlt {number=%d}{name=USER0}{display=Serial link (dissect: one packet per read, direction flags)}\n", capture.LinkUser0)
		return err
	case o.config:
		_, err := io.WriteString(stdout, extcapConfig(o.ports()))
		return err
	}
	return extcapCapture(ctx, o)
}

// extcapConfig is the --extcap-config answer: the dialog's options.
func extcapConfig(ports []string) string {
	var b strings.Builder
	d := serial.DefaultMode()
	// A string, not an editselector (Wireshark 4.0 rejects that type):
	// any path can be given, the ports found are named in the tooltip.
	found := " (none found)"
	if len(ports) > 0 {
		found = ": " + strings.Join(ports, ", ")
	}
	portArg := func(n int, call, display, tooltip string) {
		fmt.Fprintf(&b, "arg {number=%d}{call=%s}{display=%s}{type=string}{tooltip=%s. Serial ports%s}{placeholder=/dev/ttyUSB%d}{group=Ports}\n", n, call, display, tooltip, found, n)
	}
	portArg(0, "--host-tx", "Host TX port", "Port whose RX is wired to the host's TX line: hears host to device bytes (empty: not tapped)")
	portArg(1, "--device-tx", "Device TX port", "Port whose RX is wired to the device's TX line: hears device to host bytes (empty: not tapped)")
	fmt.Fprintf(&b, "arg {number=2}{call=--baud}{display=Baud rate}{type=integer}{range=1,100000000}{default=%d}{tooltip=Line speed in bits per second}{group=Line}\n", d.Baud)
	selector := func(n int, call, display, tooltip string, values []string, def string) {
		fmt.Fprintf(&b, "arg {number=%d}{call=%s}{display=%s}{type=selector}{tooltip=%s}{group=Line}\n", n, call, display, tooltip)
		for _, v := range values {
			dflt := ""
			if v == def {
				dflt = "{default=true}"
			}
			fmt.Fprintf(&b, "value {arg=%d}{value=%s}{display=%s}%s\n", n, v, v, dflt)
		}
	}
	selector(3, "--data-bits", "Data bits", "Data bits per character", []string{"5", "6", "7", "8"}, fmt.Sprint(d.DataBits))
	selector(4, "--parity", "Parity", "Parity bit", []string{"none", "odd", "even", "mark", "space"}, d.Parity.String())
	selector(5, "--stop-bits", "Stop bits", "Stop bits per character", []string{"1", "1.5", "2"}, d.StopBits.String())
	return b.String()
}

// extcapCapture taps the ports and writes every read to the fifo as
// pcapng, through the pipeline's -w writer (pipeline.Save, as 'dissect
// serial -w' does), until SIGTERM/SIGINT, the end of the ports or the
// fifo's reader going away. Nothing is decoded: Wireshark does that.
func extcapCapture(ctx context.Context, o *extcapOpts) error {
	if o.fifo == "" {
		return usageError{errors.New("--capture needs --fifo PATH")}
	}
	s := &o.serial
	mode, err := s.mode()
	if err != nil {
		extcapUnblock(o.fifo)
		return usageError{err}
	}
	hostTx, deviceTx, err := s.ports(nil)
	if err != nil {
		extcapUnblock(o.fifo)
		return usageError{errors.New(strings.Replace(err.Error(), "(dissect serial HOST_TX_PORT [DEVICE_TX_PORT], or --proxy DEVICE --link PATH)", "(set Host TX port and/or Device TX port in the interface's options)", 1))}
	}
	// An empty registry: every read goes to the fifo, none is decoded.
	reg, err := dissect.NewRegistry()
	if err != nil {
		extcapUnblock(o.fifo)
		return err
	}
	ctx, abort, stopSignals := catchSignals(ctx)
	defer stopSignals()
	src, _, err := s.open(mode, hostTx, deviceTx)
	if err != nil {
		extcapUnblock(o.fifo)
		return err
	}
	defer src.Close()
	f, err := openFifo(ctx, o.fifo)
	if f == nil {
		return err // nil when stopped before Wireshark opened the fifo
	}
	save, err := pipeline.NewSave(f, src.Link(), capture.LinkUser0, serial.Snaplen)
	if err != nil {
		return extcapWriteErr(err)
	}
	_, err = pipeline.Run(ctx, src, pipeline.Config{
		Registry:  reg,
		CountOnly: true,
		Live:      &pipeline.LiveConfig{Name: src.Link(), Save: save, QueueBytes: s.queue, Abort: abort},
	})
	if errors.Is(err, pipeline.ErrAborted) {
		return nil // a second signal: the fifo was closed all the same
	}
	return extcapWriteErr(err)
}

// openFifo opens the fifo for writing, which waits for its reader; it
// returns nil and no error when ctx ends first (Wireshark stopped the
// capture before opening it).
func openFifo(ctx context.Context, fifo string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		ch <- opened{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-ctx.Done():
		return nil, nil
	}
}

// extcapWriteErr is nil when the fifo's reader went away (Wireshark
// stopped reading: the capture is over), else err.
func extcapWriteErr(err error) error {
	if errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return err
}

// extcapUnblock opens and closes the fifo without waiting, so that a
// reader already waiting in open sees end of file instead of waiting for
// a capture that failed to start.
func extcapUnblock(fifo string) {
	if fifo == "" {
		return
	}
	if fi, err := os.Stat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// extcapDir returns Wireshark's personal extcap folder and why it is that
// one. tshark -G folders names it ("Personal Extcap path", Wireshark 4.2
// and later); older versions read the "extcap" folder of the personal
// configuration; without tshark, the 4.2 default
// ~/.local/lib/wireshark/extcap.
func extcapDir() (dir, why string, err error) {
	if _, err := exec.LookPath("tshark"); err == nil {
		out, err := exec.Command("tshark", "-G", "folders").Output()
		if err == nil {
			var conf string
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			for sc.Scan() {
				k, v, ok := strings.Cut(sc.Text(), ":")
				if !ok {
					continue
				}
				k, v = strings.TrimSpace(k), strings.TrimSpace(v)
				switch k {
				case "Personal Extcap path":
					return v, "tshark -G folders: Personal Extcap path", nil
				case "Personal configuration":
					conf = v
				}
			}
			if conf != "" {
				return filepath.Join(conf, "extcap"), "tshark -G folders has no Personal Extcap path (Wireshark before 4.2): the extcap folder of the personal configuration", nil
			}
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", "", fmt.Errorf("no home folder (%v): give the folder with --dir", err)
	}
	return filepath.Join(home, ".local", "lib", "wireshark", "extcap"),
		"tshark not found: Wireshark 4.2's default personal extcap folder (Wireshark before 4.2 reads ~/.config/wireshark/extcap: use --dir)", nil
}

// extcapInstall writes the wrapper that runs this binary as 'dissect
// extcap' (Wireshark runs extcap programs with its flags first).
func extcapInstall(dir string, stdout io.Writer) error {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return fmt.Errorf("cannot find the dissect binary: %w", err)
	}
	why := "--dir"
	if dir == "" {
		if dir, why, err = extcapDir(); err != nil {
			return err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, extcapScript)
	script := "#!/bin/sh\n# Wireshark extcap wrapper written by 'dissect extcap --install'.\nexec " + shellQuote(exe) + " extcap \"$@\"\n"
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(script), 0o755); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	_, err = fmt.Fprintf(stdout, "installed %s (runs %s extcap)\n  folder: %s\n  chosen by: %s\nRestart Wireshark (or run tshark -D): the interface is %s (%s).\n", path, exe, dir, why, extcapIface, extcapDisplay)
	return err
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
