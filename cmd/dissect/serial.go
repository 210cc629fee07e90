package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/capture/serial"
	"github.com/dissect-tools/dissect/pipeline"
)

// serialOpts are the flags of 'dissect serial'.
type serialOpts struct {
	read     readOpts
	hostTx   string
	deviceTx string
	proxy    string
	link     string
	baud     int
	dataBits int
	parity   string
	stopBits string
	write    string
	ring     []string
	queue    int
}

// serialSource is what a tap and a proxy have in common.
type serialSource interface {
	capture.Source
	// Pending is how many reads are queued; 0 when caught up.
	Pending() int
	// Link is the serial link's name.
	Link() string
	// Stats counts the bytes read and those that could not be queued.
	Stats() serial.TapStats
	// Stop closes the ports: Next returns what was read, then io.EOF.
	Stop()
}

func newSerialCmd(stderr io.Writer) *cobra.Command {
	o := &serialOpts{}
	cmd := &cobra.Command{
		Use:   "serial [flags] [HOST_TX_PORT [DEVICE_TX_PORT]]",
		Short: "Decode a serial link live: tap its two wires, or proxy it through a pseudo-terminal",
		Long: `Decode a serial (UART) link live.

Tap: two USB-UART adapters each listen to one wire of the link. The first
port (or --host-tx) has its RX pin on the host's TX line and hears
host→device bytes; the second (or --device-tx) has its RX pin on the
device's TX line and hears device→host bytes. Nothing is ever sent. One port
alone decodes one direction. The two directions are merged by read time and
decoded as one stream named by the two paths joined by "+".

Proxy: --proxy DEVICE --link PATH opens the real device, creates a
pseudo-terminal (raw mode) and a symlink at PATH to it; point the host
application at PATH instead of the device. Bytes are forwarded both ways
unchanged as soon as they are read, and both directions are decoded. The
symlink is removed on exit.

Records: src "host", dst the link name for host→device bytes, and the
reverse for device→host. Protocols are detected by content; -d serial,PROTO
forces one. -w saves every read to a pcapng file (link type 147, one
interface named after the link, direction flags), which 'dissect FILE' reads
back with the same output. Ctrl-C (or SIGTERM) stops: output is flushed, the
file closed and the summary printed.`,
		Example: `  dissect serial /dev/ttyUSB0 /dev/ttyUSB1                 # host-tx, device-tx; 115200 8N1
  dissect serial --device-tx /dev/ttyUSB1 --baud 9600 --parity even
  dissect serial -o json -d serial,deltarobot -w link.pcapng /dev/ttyUSB0 /dev/ttyUSB1
  dissect serial --proxy /dev/ttyUSB0 --link /tmp/ttyPROSTHESIS -w session.pcapng
  dissect link.pcapng                                       # read a saved session back`,
		Args:              cobra.MaximumNArgs(2),
		ValidArgsFunction: completeSerialPorts,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSerial(cmd, o, args, stderr)
		},
	}
	addReadFlags(cmd, &o.read)
	f := cmd.Flags()
	_ = f.MarkHidden("read")
	_ = f.MarkHidden("progress")
	f.StringVar(&o.hostTx, "host-tx", "", "port whose RX is wired to the host's TX line (hears host→device bytes)")
	f.StringVar(&o.deviceTx, "device-tx", "", "port whose RX is wired to the device's TX line (hears device→host bytes)")
	f.StringVar(&o.proxy, "proxy", "", "proxy mode: the real device to open (the host application opens --link instead)")
	f.StringVar(&o.link, "link", "", "proxy mode: where to make the symlink to the pseudo-terminal, e.g. /tmp/ttyPROSTHESIS")
	f.IntVar(&o.baud, "baud", serial.DefaultMode().Baud, "line speed in bits per second")
	f.IntVar(&o.dataBits, "data-bits", serial.DefaultMode().DataBits, "data bits per character: 5, 6, 7 or 8")
	f.StringVar(&o.parity, "parity", serial.DefaultMode().Parity.String(), "parity: none, odd, even, mark or space")
	f.StringVar(&o.stopBits, "stop-bits", serial.DefaultMode().StopBits.String(), "stop bits: 1, 1.5 or 2")
	f.StringVarP(&o.write, "write", "w", "", "save every read to this pcapng file (read it back with 'dissect FILE')")
	addRingFlag(cmd, &o.ring)
	addQueueFlag(cmd, &o.queue)
	_ = cmd.RegisterFlagCompletionFunc("parity", cobra.FixedCompletions([]string{"none", "odd", "even", "mark", "space"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("stop-bits", cobra.FixedCompletions([]string{"1", "1.5", "2"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// mode returns the line settings from the flags.
func (o *serialOpts) mode() (serial.Mode, error) {
	m := serial.Mode{Baud: o.baud, DataBits: o.dataBits}
	var err error
	if m.Parity, err = serial.ParseParity(o.parity); err != nil {
		return m, fmt.Errorf("--parity %q: want none, odd, even, mark or space", o.parity)
	}
	if m.StopBits, err = serial.ParseStopBits(o.stopBits); err != nil {
		return m, fmt.Errorf("--stop-bits %q: want 1, 1.5 or 2", o.stopBits)
	}
	if m.Baud <= 0 {
		return m, fmt.Errorf("--baud %d: must be positive", m.Baud)
	}
	if m.DataBits < 5 || m.DataBits > 8 {
		return m, fmt.Errorf("--data-bits %d: want 5, 6, 7 or 8", m.DataBits)
	}
	return m, nil
}

// ports resolves the tap's ports from the arguments and flags.
func (o *serialOpts) ports(args []string) (hostTx, deviceTx string, err error) {
	if o.proxy != "" || o.link != "" {
		switch {
		case o.proxy == "":
			return "", "", errors.New("--link needs --proxy DEVICE")
		case o.link == "":
			return "", "", errors.New("--proxy needs --link PATH: the symlink the host application opens instead of the device")
		case len(args) > 0 || o.hostTx != "" || o.deviceTx != "":
			return "", "", errors.New("--proxy takes no tap ports (arguments, --host-tx, --device-tx)")
		}
		return "", "", nil
	}
	hostTx, deviceTx = o.hostTx, o.deviceTx
	if len(args) > 0 {
		if hostTx != "" || deviceTx != "" {
			return "", "", errors.New("give the ports either as arguments (host-tx, then device-tx) or with --host-tx/--device-tx, not both")
		}
		hostTx = args[0]
		if len(args) > 1 {
			deviceTx = args[1]
		}
	}
	switch {
	case hostTx == "" && deviceTx == "":
		return "", "", errors.New("no serial port given (dissect serial HOST_TX_PORT [DEVICE_TX_PORT], or --proxy DEVICE --link PATH)")
	case hostTx == deviceTx:
		return "", "", fmt.Errorf("%s is given as both host-tx and device-tx", hostTx)
	}
	return hostTx, deviceTx, nil
}

// open starts the tap or the proxy and describes it for the user.
func (o *serialOpts) open(mode serial.Mode, hostTx, deviceTx string) (serialSource, string, error) {
	if o.proxy != "" {
		p, err := serial.OpenProxy(serial.ProxyConfig{Device: o.proxy, Link: o.link, Mode: mode, QueueBytes: o.queue})
		if err != nil {
			return nil, "", err
		}
		return p, fmt.Sprintf("proxying %s (%s) for %s -> %s", o.proxy, mode, p.LinkPath(), p.PTYPath()), nil
	}
	t, err := serial.OpenTap(serial.TapConfig{HostTx: hostTx, DeviceTx: deviceTx, Mode: mode, QueueBytes: o.queue})
	if err != nil {
		return nil, "", err
	}
	desc := "tapping "
	if hostTx != "" {
		desc += hostTx + " (host→device)"
	}
	if hostTx != "" && deviceTx != "" {
		desc += " and "
	}
	if deviceTx != "" {
		desc += deviceTx + " (device→host)"
	}
	return t, desc + " at " + mode.String(), nil
}

func runSerial(cmd *cobra.Command, o *serialOpts, args []string, stderr io.Writer) error {
	if len(o.read.files) > 0 {
		return usageError{errors.New("-r/--read reads capture files; 'dissect serial' reads ports (read a saved file with 'dissect FILE')")}
	}
	mode, err := o.mode()
	if err != nil {
		return usageError{err}
	}
	hostTx, deviceTx, err := o.ports(args)
	if err != nil {
		return usageError{err}
	}
	rb, err := ring(o.ring, o.write)
	if err != nil {
		return err
	}
	o.read.fox.stderr = stderr
	reg, out, err := o.read.setup(cmd.OutOrStdout())
	if err != nil {
		return err
	}
	stopProfile, err := o.read.startProfile()
	if err != nil {
		return err
	}
	defer stopProfile()

	// Signals are caught before any port is opened, so that Ctrl-C always
	// ends the run cleanly (and a proxy's symlink is removed).
	ctx, abort, stopSignals := catchSignals(cmd.Context())
	defer stopSignals()
	src, desc, err := o.open(mode, hostTx, deviceTx)
	if err != nil {
		return err
	}
	defer src.Close()
	lc := &pipeline.LiveConfig{
		Name:       src.Link(),
		Abort:      abort,
		QueueBytes: o.queue,
		// Reads the tap could not queue reach reassembly as Dropped
		// markers, so they are gap records; this counts their bytes.
		SerialDropped: func() int64 { return src.Stats().Total().Dropped },
		Warn:          func(msg string) { fmt.Fprintf(stderr, "dissect: warning: %s\n", msg) },
	}
	if o.write != "" {
		if lc.Save, err = pipeline.CreateSave(o.write, src.Link(), capture.LinkUser0, serial.Snaplen, rb); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "dissect: %s; Ctrl-C to stop\n", desc)
	return runCapture(ctx, &o.read, reg, out, src, lc, stderr)
}
