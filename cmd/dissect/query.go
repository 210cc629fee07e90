package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
	"github.com/dissect-tools/dissect/query"
	"github.com/dissect-tools/dissect/stats"
)

// queryOpts are the flags that ask questions of the records: a display
// filter, field output, statistics and the message bytes.
type queryOpts struct {
	display   string   // -Y
	fields    []string // -e
	fieldOpts []string // -E
	stats     []string // -z
	hex       bool     // -x
	memory    int64    // --max-stats-memory (limits.go; 0: the default)
	raw       bool     // a statistic wants the records' bytes (follow,tcp,hex,N)
	graph     string   // --graph: auto, always or never
}

func addQueryFlags(cmd *cobra.Command, o *queryOpts) {
	f := cmd.Flags()
	f.StringVarP(&o.display, "display-filter", "Y", "", "show only the records this display filter matches, e.g. 'deltarobot.x > 0.1 && stream == 0' (docs/display-filters.md; names: dissect protocols --fields)")
	f.StringArrayVarP(&o.fields, "field", "e", nil, "with -o fields: print this field of each record (a record key such as stream, time_epoch or time_relative (seconds since 1970 or since the first packet, also as tshark's frame.time_epoch, frame.time_relative), or a protocol field such as vrpn.pos[0]); may be repeated")
	f.StringArrayVarP(&o.fieldOpts, "field-option", "E", nil, "with -o fields, as tshark: header=y, separator=/t|/s|CHAR, quote=d|s|n, occurrence=f|l|a, aggregator=CHAR; may be repeated")
	f.StringArrayVarP(&o.stats, "statistics", "z", nil, "print statistics after the records (only them with -q): rtt, rate, conv[,tcp|udp], io,stat,SECONDS[,FILTER], follow,STREAM, follow,tcp|udp,ascii|hex|raw,N (N as tshark's tcp.stream); may be repeated (docs/statistics.md)")
	f.StringVar(&o.graph, "graph", "auto", "draw a bar per interval in -z io,stat and a sparkline of each row's messages over the run in -z rate: auto (when the output is a terminal), always, never; Unicode blocks, '#' and '.-=#' under LANG=C")
	_ = cmd.RegisterFlagCompletionFunc("graph", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	f.BoolVarP(&o.hex, "hex", "x", false, "show the bytes of each message: a hex and ASCII dump under its table row; \"raw\" (hex) in JSON; a raw column in -o parquet")
	_ = cmd.RegisterFlagCompletionFunc("statistics", cobra.FixedCompletions([]string{"rtt", "rate", "conv", "conv,tcp", "conv,udp", "io,stat,1", "follow,0", "follow,tcp,ascii,0", "follow,udp,ascii,0"}, cobra.ShellCompDirectiveNoFileComp))
}

// drawGraph reports whether the statistics draw their pictures (--graph)
// on output that is a terminal (tty) or not.
func (o *queryOpts) drawGraph(tty bool) (bool, error) {
	switch o.graph {
	case "auto", "":
		return tty, nil
	case "always":
		return true, nil
	case "never":
		return false, nil
	}
	return false, usageError{fmt.Errorf("--graph %q: want auto, always or never", o.graph)}
}

// active reports whether records must reach the query sink whole (not
// counted only, as -q alone does).
func (o *queryOpts) active() bool { return o.display != "" || len(o.stats) > 0 }

// querySink is a run's display filter and statistics: a sink in front of the
// output that passes on the records the filter matches, and feeds them
// to the statistics.
type querySink struct {
	match  func(*dissect.Record) bool
	stats  []stats.Stat
	out    sink      // nil: -q
	stdout io.Writer // where statistics go
	total  int64
	shown  int64
}

// build compiles the flags against the registry's protocols and fields;
// the statistics read the records' declarations from it.
func (o *queryOpts) build(reg *dissect.Registry, out sink) (*querySink, error) {
	q := &querySink{out: out}
	compile := func(expr string) (func(*dissect.Record) bool, error) {
		f, err := query.CompileWith(expr, query.Options{Known: reg.KnownField, Info: output.Info})
		if err != nil {
			return nil, err
		}
		return f.Func(), nil
	}
	if o.display != "" {
		m, err := compile(o.display)
		if err != nil {
			return nil, usageError{filterError(err)}
		}
		q.match = m
	}
	for _, z := range o.stats {
		s, err := stats.Parse(z, compile, reg.Decl)
		if err != nil {
			return nil, usageError{err}
		}
		if m, ok := s.(stats.MemoryScaler); ok && o.memory > 0 {
			m.ScaleMemory(o.memory)
		}
		if r, ok := s.(interface{ NeedsRaw() bool }); ok && r.NeedsRaw() {
			o.raw = true
		}
		q.stats = append(q.stats, s)
	}
	return q, nil
}

// filterError is the error of a display filter: one line saying where and
// what, and the expression with a caret under the place as its detail.
func filterError(err error) error {
	if fe, ok := err.(*query.Error); ok {
		return detailedError{fmt.Errorf("-Y: %w", fe), fe.Caret()}
	}
	return fmt.Errorf("-Y: %w", err)
}

// detailedError is an error whose message is followed, on the lines
// after it, by a detail (a display filter with a caret).
type detailedError struct {
	err    error
	detail string
}

func (e detailedError) Error() string  { return e.err.Error() }
func (e detailedError) Unwrap() error  { return e.err }
func (e detailedError) Detail() string { return e.detail }

// Record passes r on when it matches.
func (q *querySink) Record(r *dissect.Record) error {
	q.total++
	if q.match != nil && !q.match(r) {
		if s, ok := q.out.(interface{ Seen(time.Time) }); ok {
			s.Seen(r.Time) // -t d counts from records not shown
		}
		return nil
	}
	q.shown++
	for _, s := range q.stats {
		s.Record(r)
	}
	if q.out != nil {
		return q.out.Record(r)
	}
	return nil
}

// StreamOpened tells the statistics that count streams (follow in
// tshark's form) of a stream opened.
func (q *querySink) StreamOpened(id dissect.StreamID) {
	for _, s := range q.stats {
		if o, ok := s.(interface{ StreamOpened(id dissect.StreamID) }); ok {
			o.StreamOpened(id)
		}
	}
}

// SetEpoch passes the first packet's time to the table.
func (q *querySink) SetEpoch(t time.Time) {
	if e, ok := q.out.(interface{ SetEpoch(time.Time) }); ok {
		e.SetEpoch(t)
	}
}

// Flush flushes the output.
func (q *querySink) Flush() error {
	if q.out != nil {
		return q.out.Flush()
	}
	return nil
}

// Close closes the output, when it needs closing.
func (q *querySink) Close() error { return closeOutput(q.out) }

// finish writes the statistics to stdout, after the records, and the
// display filter's count to stderr.
func (q *querySink) finish(stderr io.Writer, json bool, to stats.TableOptions) error {
	stdout := q.stdout
	for i, s := range q.stats {
		var err error
		if json {
			err = s.WriteJSON(stdout)
		} else {
			if i > 0 || q.out != nil {
				fmt.Fprintln(stdout)
			}
			err = s.WriteTable(stdout, to)
		}
		if err != nil {
			return err
		}
	}
	if q.match != nil {
		fmt.Fprintf(stderr, "display filter: %d of %d records matched\n", q.shown, q.total)
	}
	return nil
}

// knownFieldNames checks -e names against the protocols' fields.
func knownFieldNames(reg *dissect.Registry, names []string) error {
	var bad []string
	for _, n := range names {
		p, err := query.ParsePath(n)
		if err != nil {
			return usageError{fmt.Errorf("-e %v", err)}
		}
		if p.RecordKey() == "" && !reg.KnownField(p.Proto(), p.Field()) {
			if h := query.TSharkHint(n); h != "" {
				return usageError{fmt.Errorf("-e %s is tshark's name: %s", n, h)}
			}
			bad = append(bad, n)
		}
	}
	if len(bad) > 0 {
		return usageError{fmt.Errorf("-e %s: no such field (dissect protocols --fields lists them)", strings.Join(bad, ", "))}
	}
	return nil
}

// fieldsWriter returns the -o fields writer of the -e names.
func (o *queryOpts) fieldsWriter(stdout io.Writer, reg *dissect.Registry) (sink, error) {
	if len(o.fields) == 0 {
		return nil, usageError{errors.New("-o fields needs the fields to print: -e NAME (e.g. -e stream -e type -e deltarobot.x)")}
	}
	if err := knownFieldNames(reg, o.fields); err != nil {
		return nil, err
	}
	var fo output.FieldsOptions
	for _, e := range o.fieldOpts {
		if err := output.ParseFieldsOption(e, &fo); err != nil {
			return nil, usageError{fmt.Errorf("-E %s", err)}
		}
	}
	w, err := output.NewFields(stdout, o.fields, fo)
	if err != nil {
		return nil, usageError{err}
	}
	return w, nil
}
