// Command dissect decodes the binary protocols spoken between robots,
// prostheses, VR rigs and their controllers, from capture files (and, with
// its subcommands, live sources). Run `dissect --help`.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
