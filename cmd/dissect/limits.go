package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/dissect/vrpn"
	"github.com/dissect-tools/dissect/pipeline"
	"github.com/dissect-tools/dissect/reassembly"
	"github.com/dissect-tools/dissect/stats"
)

// limitFlags are the bounds on what the wire makes a run hold, beyond
// --max-held-messages (held.go) and --max-partitions (parquet.go): the
// defaults keep any input's memory bounded; the flags are for users who
// want more (or less). Zero fields keep the defaults.
type limitFlags struct {
	maxTypes   countFlag // --max-types: the summary's distinct (protocol, type) rows
	vrpnNames  sizeFlag  // --max-vrpn-names: bytes of VRPN names across connections
	outOfOrder sizeFlag  // --max-out-of-order: TCP bytes held out of order, all directions
	statsMem   sizeFlag  // --max-stats-memory: -z rate's and rtt's wire strings
}

// Usage texts: each says what gives way past the bound.
var (
	maxTypesUsage   = fmt.Sprintf("the summary counts at most this many distinct (protocol, type) rows; the messages of further types named by the wire are counted in one %q row per protocol, which says how many types it holds (records keep their real type; types a protocol declares keep their row) (default %d)", dissect.OtherTypes, dissect.MaxTypeRows)
	vrpnNamesUsage  = fmt.Sprintf("vrpn: bytes of sender and type names all connections hold together (a name counts its length plus 64): SIZE in bytes, or with K, M or G; past it a new name is not recorded, with a warning and a note counting the refused names, and its messages are %q; a connection's names are given back when it ends (default %s)", vrpn.TypeUnknown, sizeString(vrpn.DefaultMaxNameBytes))
	statsMemUsage   = fmt.Sprintf("-z rate and rtt: bytes their keys and remembered request names may hold, all of them together (a key counts its strings plus 160-224 bytes); the number of keys scales with it: SIZE in bytes, or with K, M or G; past it the messages of new keys are added up in one \"(other)\" row, and rtt names a reply whose request it could not remember by its code and says how many (default %s)", sizeString(stats.DefaultMemory))
	outOfOrderUsage = fmt.Sprintf("TCP: bytes all directions together may hold out of order, waiting for a missing segment (each segment counts 64 bytes more), one direction at most a quarter of it: SIZE in bytes, or with K, M or G; past it the first hole of the direction holding data the longest is declared lost (a gap record, counted in the summary) and the data after it delivered (default %s, %s per direction)", sizeString(int64(reassembly.DefaultConfig().MaxHeldBytes)), sizeString(int64(reassembly.DefaultConfig().MaxBuffered)))
)

func (l *limitFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Var(&l.maxTypes, "max-types", maxTypesUsage)
	f.Var(&l.vrpnNames, "max-vrpn-names", vrpnNamesUsage)
	f.Var(&l.outOfOrder, "max-out-of-order", outOfOrderUsage)
	f.Var(&l.statsMem, "max-stats-memory", statsMemUsage)
}

// protocols sets the protocol options the flags bound.
func (l *limitFlags) protocols(opt *all.Options) {
	opt.VRPNNameBytes = int64(l.vrpnNames)
}

// pipeline sets the run's bounds the flags give.
func (l *limitFlags) pipeline(cfg *pipeline.Config) {
	cfg.MaxTypes = int(l.maxTypes)
	if n := int64(l.outOfOrder); n > 0 {
		n = min(n, int64(maxInt))
		cfg.Reassembly.MaxHeldBytes = int(n)
		cfg.Reassembly.MaxBuffered = int(max(n/4, 1)) // the default's ratio, 4 MiB of 16
	}
}

// extra is what the flags raise the bounds by over their defaults, in
// bytes, for the soft memory limit (memlimit.go): a type row counted at
// 400 bytes (its row and a name of up to 255 bytes).
func (l *limitFlags) extra() int64 {
	var n int64
	if l.maxTypes > 0 {
		n += max(int64(l.maxTypes)-dissect.MaxTypeRows, 0) * 400
	}
	if l.vrpnNames > 0 {
		n += max(int64(l.vrpnNames)-vrpn.DefaultMaxNameBytes, 0)
	}
	if l.outOfOrder > 0 {
		n += max(int64(l.outOfOrder)-int64(reassembly.DefaultConfig().MaxHeldBytes), 0)
	}
	if l.statsMem > 0 {
		n += max(int64(l.statsMem)-stats.DefaultMemory, 0)
	}
	return n
}

const maxInt = int(^uint(0) >> 1)

// countFlag is a count of at least 1 (0: not given, the default).
type countFlag int

func (f *countFlag) String() string {
	if *f == 0 {
		return ""
	}
	return strconv.Itoa(int(*f))
}

func (f *countFlag) Type() string { return "N" }

func (f *countFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("%q: want a whole number, at least 1", s)
	}
	*f = countFlag(n)
	return nil
}
