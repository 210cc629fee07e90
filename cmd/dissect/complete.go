package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/capture/live"
)

// countUsage is the help of -c, on every command that reads packets.
const countUsage = "stop after this many packets (files and live, as tshark -c; 0: no limit)"

// captureExts are the file name endings offered when completing a capture
// file; compressed captures end in .gz, .zst or .lz4. Mainline VRPN
// imposes no name on its logs: .vrpnlog is the one docs/vrpn.md uses.
var captureExts = []string{"pcap", "pcapng", "cap", "ntar", "vrpnlog", "gz", "zst", "lz4"}

// completeCaptures completes capture file names (shell completion, see
// 'dissect completion --help').
func completeCaptures(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return captureExts, cobra.ShellCompDirectiveFilterFileExt
}

// completeInterfaces completes -i with the interfaces dissect -D lists.
func completeInterfaces(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	ifs, err := live.Interfaces()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, 0, len(ifs))
	for _, it := range ifs {
		names = append(names, it.Name)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// completeSerialPorts completes the ports of 'dissect serial' with the
// serial devices present (USB adapters, on-board UARTs); any other path
// may still be typed.
func completeSerialPorts(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	var ports []string
	for _, pat := range []string{"/dev/ttyUSB*", "/dev/ttyACM*", "/dev/ttyS*", "/dev/ttyAMA*", "/dev/serial/by-id/*", "/dev/tty.usb*", "/dev/cu.usb*"} {
		m, _ := filepath.Glob(pat)
		ports = append(ports, m...)
	}
	return ports, cobra.ShellCompDirectiveDefault
}

// registerCompletions adds completion of file and device flags present on
// cmd.
func registerCompletions(cmd *cobra.Command) {
	fixed := func(exts ...string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return exts, cobra.ShellCompDirectiveFilterFileExt
		}
	}
	funcs := map[string]cobra.CompletionFunc{
		"read":  completeCaptures,
		"write": fixed("pcapng"),
		"proto": fixed("proto"),
		"proto-path": func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
		"interface": completeInterfaces,
		"host-tx":   completeSerialPorts,
		"device-tx": completeSerialPorts,
		"proxy":     completeSerialPorts,
	}
	for name, fn := range nameCompletions() { // -d, -Y, -e (complete_names.go)
		funcs[name] = fn
	}
	for name, fn := range funcs {
		if cmd.Flags().Lookup(name) != nil {
			_ = cmd.RegisterFlagCompletionFunc(name, fn)
		}
	}
}
