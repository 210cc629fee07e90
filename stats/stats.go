// Package stats computes the statistics of dissect's -z option, in the
// manner of tshark's: round trips and request latencies (rtt), messages and
// bytes per interval (io,stat), message rates and jitter (rate),
// conversations (conv) and one stream's records in order (follow).
//
// A [Stat] is fed every record shown (after -Y) through Record, which keeps
// no reference to the record or its slices, and writes its result at the end
// as a table or as JSON Lines. Every stat keeps bounded memory whatever the
// capture's size; where a bound is reached the output says so. The
// semantics are described in docs/statistics.md.
//
// No stat names a protocol: what a record means to a stat (a request, a
// reply and its latency, a sender, a sensor) comes from the declaration of
// its type ([dissect.TypeDecl]), looked up by a [DeclFunc].
package stats

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
)

// Stat is one -z statistic.
type Stat interface {
	// Name is the statistic's name: "rtt", "io,stat", "rate", "conv",
	// "follow"; it is the "stat" key of every JSON row.
	Name() string
	// Record accounts for one record shown. It keeps neither r nor any of
	// its slices (they are reused after the call).
	Record(r *dissect.Record)
	// WriteTable writes the statistic as an aligned table.
	WriteTable(w io.Writer, o TableOptions) error
	// WriteJSON writes the statistic as JSON Lines: one object per row,
	// its first key "stat".
	WriteJSON(w io.Writer) error
}

// DeclFunc returns the declaration a record matches, or nil when none does;
// [dissect.Registry.Decl] is one. A stat given a nil DeclFunc sees no
// declarations: rtt then counts nothing, and rate splits no row by sender.
type DeclFunc func(r *dissect.Record) *dissect.TypeDecl

// TableOptions control WriteTable.
type TableOptions struct {
	// Width is the width to fit in columns; 0: unlimited.
	Width int
	// ASCII writes only ASCII ("->" for "→", "..." for "…", "~" for "≈").
	ASCII bool
	// Hint names the flag that shows every column: the tables that leave
	// columns out to fit Width say which, and this ("--wide shows every
	// column"); none is named without it.
	Hint string
	// Graph draws a bar or sparkline per row where the statistic has one
	// (-z io,stat, -z rate): Unicode blocks, "#" with ASCII.
	Graph bool
	// Hex adds a hex dump of each record's bytes to follow (-x), when the
	// records carried them (Record.Raw).
	Hex bool
}

// Usage describes the -z forms, for --help.
func Usage() string {
	return `-z rtt                     request→reply round trips and latencies (Deltarobot and VRPN
                           ping→pong, HandControl requests) per stream and request type:
                           count, min, median, p95, p99, max, mean (ms), unanswered requests
-z io,stat,SECS[,FILTER]   messages and bytes per interval of SECS seconds, per protocol
                           (with FILTER, a display filter, one more column for the records
                           that match it)
-z rate                    per stream and message type (and sender and sensor, where a
                           message names them, as VRPN's do): messages/s, mean and max
                           inter-arrival gap, jitter, longest stall
-z conv[,tcp|udp]          per stream (of one transport with tcp or udp): endpoints,
                           protocol, messages, bytes, gaps, skipped bytes, records with
                           warnings, duration
-z follow,STREAM           every record of one stream in order, both directions (with -x:
                           their bytes)
-z follow,tcp|udp,MODE,N   as tshark: the Nth tcp (udp) stream, numbered as tshark's
                           tcp.stream; MODE ascii (the records), hex (and their bytes
                           dumped) or raw (each record's bytes as a line of hex)
-z may be given more than once. The statistics follow the records (alone with -q);
with -o json they are JSON Lines with "stat" as their first key.`
}

// Parse parses one -z argument: "rtt", "io,stat,1", "io,stat,0.5,FILTER",
// "rate", "conv", "conv,tcp", "follow,3", "follow,tcp,ascii,0". compile turns a display filter into a
// predicate; when it is nil, filters are refused. decl gives the stats the
// records' declarations. Errors are one line naming the argument.
func Parse(arg string, compile func(expr string) (func(*dissect.Record) bool, error), decl DeclFunc) (Stat, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("-z %s: %s", arg, fmt.Sprintf(format, a...))
	}
	name, rest, hasRest := strings.Cut(arg, ",")
	switch name {
	case "conv":
		if !hasRest {
			return NewConv(), nil
		}
		switch strings.TrimSpace(rest) {
		case "tcp":
			return NewConvOf(dissect.TCP), nil
		case "udp":
			return NewConvOf(dissect.UDP), nil
		}
		return nil, fail("want conv, conv,tcp or conv,udp")
	case "rtt", "rate":
		if hasRest {
			return nil, fail("%s takes no arguments", name)
		}
		if name == "rtt" {
			return NewRTT(decl), nil
		}
		return NewRate(decl), nil
	case "io":
		kind, rest, _ := strings.Cut(rest, ",")
		if kind != "stat" {
			return nil, fail("want io,stat,SECONDS[,FILTER]")
		}
		secs, filter, hasFilter := strings.Cut(rest, ",")
		secs = strings.TrimSpace(secs)
		if secs == "" {
			return nil, fail("interval: want seconds > 0 (io,stat,SECONDS[,FILTER])")
		}
		iv, err := parseInterval(secs)
		if err != nil {
			return nil, fail("interval: %v", err)
		}
		var pred func(*dissect.Record) bool
		if hasFilter {
			filter = strings.TrimSpace(filter)
			if filter == "" {
				return nil, fail("filter: empty")
			}
			if compile == nil {
				return nil, fail("filter: display filters are not available here")
			}
			pred, err = compile(filter)
			if err != nil {
				return nil, fail("filter: %v", err)
			}
		}
		return NewIOStat(iv, filter, pred), nil
	case "follow":
		if !hasRest || rest == "" {
			return nil, fail("want follow,STREAM (a stream number) or follow,tcp|udp,ascii|hex|raw,N")
		}
		f, err := parseFollow(rest)
		if err != nil {
			return nil, fail("%v", err)
		}
		return f, nil
	case "":
		return nil, errors.New("-z: empty; want rtt, io,stat,SECONDS[,FILTER], rate, conv[,tcp|udp], follow,STREAM or follow,tcp|udp,ascii|hex|raw,N")
	}
	return nil, fail("unknown statistic; want rtt, io,stat,SECONDS[,FILTER], rate, conv[,tcp|udp], follow,STREAM or follow,tcp|udp,ascii|hex|raw,N")
}

// parseInterval reads a positive number of seconds as nanoseconds (at
// least 1 µs, at most about 31 years).
func parseInterval(s string) (int64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f || f <= 0 {
		return 0, errors.New("want seconds > 0")
	}
	if f < 1e-6 {
		return 0, errors.New("want at least 0.000001 seconds")
	}
	if f > 1e9 {
		return 0, errors.New("want at most 1000000000 seconds")
	}
	return int64(f*1e9 + 0.5), nil
}
