package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/output"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // a file, device or output failed
	exitUsage = 2 // bad flags or arguments
)

// usageError marks errors in the command line, for exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// run executes the command line and returns the exit code.
//
// A reader of the output that goes away (dissect big.pcap | head) makes
// writes fail with EPIPE instead of killing the program, from the first
// write on (-o mcap writes its header before reading): a decoding run
// ends quietly with its summary (endRun), and any command exits 0, as
// tshark does.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil || errors.Is(err, syscall.EPIPE) {
		return exitOK
	}
	var status exitStatus
	if errors.As(err, &status) {
		return status.code
	}
	var silent silentError
	if !errors.As(err, &silent) {
		fmt.Fprintf(stderr, "dissect: %s\n", oneLine(err.Error()))
		var d interface{ Detail() string }
		if errors.As(err, &d) {
			for _, line := range strings.Split(d.Detail(), "\n") {
				fmt.Fprintf(stderr, "  %s\n", output.Escape(line))
			}
		}
	}
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		// The help of the command that was run: 'dissect serial --help'
		// for a serial error.
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return exitUsage
	}
	return exitError
}

// silentError is returned when the error was already reported.
type silentError struct{}

func (silentError) Error() string { return "errors were reported" }

// oneLine makes an error message one line, safe for a terminal: line
// breaks become "; " and other controls are escaped.
func oneLine(s string) string {
	return output.Escape(strings.ReplaceAll(strings.TrimSpace(s), "\n", "; "))
}

// isCobraUsage recognises cobra's own flag and argument errors.
func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument", "unknown command", "accepts ", "requires at least"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	opts := &readOpts{}
	lopts := &liveOpts{}
	root := &cobra.Command{
		Use:   "dissect [flags] CAPTURE...",
		Short: "Decode robot, prosthesis and VR protocols from captures",
		Long: `dissect decodes the binary protocols spoken between robots, prostheses, VR rigs
and their controllers: VRPN, Deltarobot VR, HandControl (the prosthesis link),
Neptune ROV and Roboid Control.

Given capture files (pcap or pcapng, plain or gzip/zstd/lz4-compressed;
several files are read in order as one capture, as tcpdump -C splits them),
or mainline VRPN's own log files (.vrpnlog, also compressed; docs/vrpn.md),
it reassembles TCP connections and UDP flows, finds each stream's protocol by
its content (or its default port, or a -d rule), and prints every message: a
table fitted to the terminal by default (--wide for every column), JSON Lines
with -o json. With -i it captures live from a network interface; 'dissect
serial' taps a serial line.

Every byte of every stream is accounted for: it is in a decoded message, a
"skipped" record (seen but not decodable, with the reason) or a "gap" record
(never captured). A summary goes to stderr at the end.`,
		Example: `  dissect pcaps/vrpn_tcp_only.pcap
  dissect -o json capture.pcapng | jq 'select(.type == "vrpn_Tracker Pos_Quat") | .fields.pos'
  dissect -d tcp.port==4000,deltarobot capture.pcap
  dissect -q big.pcap                              # summary only
  dissect -Y 'deltarobot.x > 0.1 && stream == 0' capture.pcap   # display filter
  dissect -o fields -e time -e vrpn.pos[0] -E header=y capture.pcap
  dissect -T fields -e time_relative -e deltarobot.x capture.pcap  # seconds since the first packet
  dissect -V -Y 'type == "pong"' capture.pcap      # every field of each record, as a tree
  dissect -q -z rtt -z rate capture.pcap            # round trips, rates and stalls
  dissect session.vrpnlog                          # a VRPN connection's log file
  dissect protocols --fields                       # the field names for -Y and -e
  dissect -i lo -f 'tcp port 3883 or udp port 3883'  # live
  dissect serial /dev/ttyUSB0 /dev/ttyUSB1          # tap a UART: host TX, device TX
  dissect protocols                                # what is decoded, on which ports`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if handled, err := rootLive(cmd, opts, lopts, args, stderr); handled {
				return err
			}
			if err := suggestCommand(cmd, args, stderr); err != nil { // suggest.go
				return err
			}
			files := append(append([]string(nil), opts.files...), args...)
			if len(files) == 0 {
				return usageError{errors.New("no capture file given (dissect FILE, or dissect --help)")}
			}
			opts.count = lopts.count
			if cutRequested(lopts) {
				return runCut(cmd, opts, lopts, files, stdin, stderr)
			}
			return runRead(cmd, opts, files, stdin, stderr)
		},
		ValidArgsFunction: completeCaptures,
		Version:           versionLine(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.Flags().BoolP("version", "v", false, "print the version, commit and Go version, and exit")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetIn(stdin)
	addReadFlags(root, opts)
	addLiveFlags(root, lopts)
	root.AddCommand(newReadCmd(stdin, stderr), newProtocolsCmd(), newVersionCmd())
	root.AddCommand(newSerialCmd(stderr))
	root.AddCommand(newLiveCmd(stderr))
	root.AddCommand(newExtcapCmd(stdout, serialAdapters))
	root.AddCommand(newManCmd()) // man.go
	registerCompletions(root)
	for _, c := range root.Commands() {
		registerCompletions(c)
	}
	return root
}
