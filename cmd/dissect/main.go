// Command dissect decodes the binary protocols spoken between robots,
// prostheses, VR rigs and their controllers, from capture files, live
// network interfaces (-i) and serial links ('dissect serial'), and serves
// serial taps to Wireshark ('dissect extcap'). Run `dissect --help`.
//
// This package is flags and wiring: it turns a command line into a
// capture.Source, a pipeline.Config and an output, runs pipeline.Run, and
// ends every run the same way (endRun: statistics, summary, exit code).
// The run itself is pipeline's; decoding is dissect's and reassembly's;
// the outputs are output's, stats' and query's.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
