package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/output"
	"github.com/dissect-tools/dissect/output/mcapout"
	"github.com/dissect-tools/dissect/output/parquetout"
	"github.com/dissect-tools/dissect/pipeline"
	"github.com/dissect-tools/dissect/stats"
)

// readOpts are the flags shared by every command that decodes.
type readOpts struct {
	files      []string
	format     string
	decodeAs   []string
	quiet      bool
	timeFormat string
	progress   string
	noSummary  bool
	cpuProfile string
	wide       bool
	threads    int
	outPath    string      // --out: the Parquet lake's directory, the MCAP file, the text output's file, -o foxglove's address
	out        *recordsOut // --out FILE of the text output forms (outfile.go)
	mcapComp   string      // --mcap-compression (mcap.go)
	mcapEnc    string      // --mcap-encoding (mcap.go, foxglove.go)
	fox        foxOpts     // -o foxglove (foxglove.go)
	q          queryOpts
	query      *querySink         // the run's filter and statistics, when asked for
	statsTable stats.TableOptions // how statistics tables are laid out
	count      int64              // -c: stop after this many packets (on the root command, a live flag)
	proto      protoFlags         // what the protocols decode (schema.go)
	limits     dissect.Limits     // --max-held-messages (held.go)
	maxParts   int                // --max-partitions (parquet.go)
	partID     string             // --part-id (parquet.go)
	parquetZ   string             // --parquet-compression (parquet.go)
	lim        limitFlags         // --max-types, --max-vrpn-names, --max-out-of-order (limits.go)
	tshark     tsharkOpts         // -V, -T (tshark.go)
	// interrupted is the signal that stopped a file run (nil: none).
	interrupted os.Signal
}

func addReadFlags(cmd *cobra.Command, o *readOpts) {
	f := cmd.Flags()
	f.StringArrayVarP(&o.files, "read", "r", nil, "read this capture file (pcap, pcapng or VRPN log, also gzip-, zstd- or lz4-compressed; - for stdin); may be repeated, and files may also be given as arguments")
	f.StringVarP(&o.format, "output", "o", "table", "output format: table (one aligned line per message), json (JSON Lines, see docs/output.md), fields (the -e fields, tab-separated), parquet (a lake in --out DIR, docs/scale.md), mcap (for Foxglove and Lichtblick, to --out FILE or a redirected stdout, docs/mcap.md) or foxglove (served live to Foxglove and Lichtblick on ws://--out, 127.0.0.1:8765 by default; files play back at --speed and the server stays up until Ctrl-C; docs/foxglove.md)")
	f.StringArrayVarP(&o.decodeAs, "decode-as", "d", nil, "decode a port as a protocol, tshark style: tcp.port==4000,deltarobot, udp.port==N,PROTO, a range tcp.port==3999-4001,PROTO, or serial,PROTO; may be repeated (see 'dissect protocols')")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print no per-message output, only the summary on stderr")
	f.StringVarP(&o.timeFormat, "time-format", "t", "r", "table TIME column, as tshark -t: r (seconds since the first packet), a (local time of day; TZ is respected), ad (local date and time), adoy (local year/day of year and time), u, ud, udoy (the same in UTC), e (epoch seconds), d (seconds since the previous record), dd (since the previous record shown by -Y)")
	f.StringVar(&o.progress, "progress", "auto", "progress bar on stderr (file, percent, rate, time left): auto (when stderr is a terminal and the records do not go to one), always, never")
	f.BoolVar(&o.noSummary, "no-summary", false, "do not print the summary on stderr at the end")
	f.BoolVar(&o.wide, "wide", false, "table: do not fit lines to the terminal's width; show every column and the whole INFO (a protocol summary that leaves fields out or shortens a value gives way to every field in full)")
	f.IntVar(&o.threads, "threads", 0, "goroutines to keep busy: json formats records beside the decoder; mcap compresses chunks and parquet encodes row groups beside it, and from 3 also write the records on a goroutine of their own; -q dissects beside reading (0: one per CPU, 2 for mcap's and parquet's compression; 1: everything in one goroutine); the output is the same")
	addQueryFlags(cmd, &o.q)
	o.tshark.add(cmd)
	f.StringVar(&o.outPath, "out", "", "where the records go instead of stdout: -o table, json, fields: this file (created or truncated; -z statistics go there too, as with > FILE); -o parquet: the lake's directory (created if needed; runs may share one); -o mcap: the file; -o foxglove: HOST:PORT to serve on (default 127.0.0.1:8765, loopback only; 0.0.0.0:8765 serves every interface)")
	o.fox.add(f)
	f.StringVar(&o.mcapComp, "mcap-compression", mcapout.CompressionZstd, "-o mcap: the chunks' compression: zstd (the smallest file), lz4 (faster to write and to open, the file about a third larger) or none (no compression CPU, the file several times larger); Foxglove and Lichtblick read all three")
	f.IntVar(&o.maxParts, "max-partitions", parquetout.DefaultMaxPartitions, "-o parquet: at most this many partitions named by the wire (types of VRPN's \"*\" declaration, undeclared records) per run; the records of further types go to type=__overflow__ with their type in column record_type")
	f.StringVar(&o.parquetZ, "parquet-compression", parquetout.Compressions[0], "-o parquet: the pages' codec, one of "+strings.Join(parquetout.Compressions, ", ")+": snappy, what DuckDB, Spark and pyarrow write by default, takes the least CPU of the three codecs; zstd makes a lake about a quarter smaller for about 30% more CPU (docs/performance-35-cpu.md); none leaves the pages uncompressed (about 4 times larger); DuckDB, Spark, pyarrow and Polars read all four (docs/scale.md)")
	f.StringVar(&o.partID, "part-id", "", "-o parquet: name the parts part-ID-N.parquet instead of by start time, pid and random bits (letters, digits, - and _; at most 64), so that rerunning the same input with the same ID replaces its parts instead of adding copies (scale/dask_ingest.py: a hash of the capture; docs/scale.md)")
	o.proto.add(cmd)
	addHeldFlag(cmd, &o.limits)
	o.lim.add(cmd)
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile to this file (for performance work)")
	_ = f.MarkHidden("cpuprofile")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json", "fields", "parquet", "mcap", "foxglove"}, cobra.ShellCompDirectiveNoFileComp))
	f.StringVar(&o.mcapEnc, "mcap-encoding", mcapout.EncodingProtobuf, "-o mcap and -o foxglove: the record topics' message encoding: protobuf (a message type per declared record type, made from the declarations: about half the file and the CPU of json; Foxglove, Lichtblick and the MCAP libraries decode it from the file's own schemas) or json (each message the record's -o json object, with a JSON Schema); docs/mcap.md says how to read either")
	_ = cmd.RegisterFlagCompletionFunc("mcap-encoding", cobra.FixedCompletions([]string{mcapout.EncodingProtobuf, mcapout.EncodingJSON}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("mcap-compression", cobra.FixedCompletions([]string{mcapout.CompressionLZ4, mcapout.CompressionZstd, mcapout.CompressionNone}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("time-format", cobra.FixedCompletions(output.TimeFormats, cobra.ShellCompDirectiveNoFileComp))
}

func newReadCmd(stdin io.Reader, stderr io.Writer) *cobra.Command {
	opts := &readOpts{}
	lo := &liveOpts{} // -w and -f (cut.go)
	cmd := &cobra.Command{
		Use:   "read [flags] CAPTURE...",
		Short: "Decode capture files (the same as 'dissect CAPTURE...')",
		Example: `  dissect read capture.pcap
  dissect read -o json a.pcap b.pcap`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeCaptures,
		RunE: func(cmd *cobra.Command, args []string) error {
			files := append(append([]string(nil), opts.files...), args...)
			if len(files) == 0 {
				return usageError{errors.New("no capture file given")}
			}
			if cutRequested(lo) {
				return runCut(cmd, opts, lo, files, stdin, stderr)
			}
			return runRead(cmd, opts, files, stdin, stderr)
		},
	}
	addReadFlags(cmd, opts)
	cmd.Flags().Int64VarP(&opts.count, "count", "c", 0, countUsage)
	addFileCutFlags(cmd, lo)
	return cmd
}

// sink is what the decoding commands write records to.
type sink interface {
	dissect.Sink
	Flush() error
}

// setup validates the shared flags and builds the registry and the sink.
// Records are buffered; a live run's pipeline flushes the sink whenever
// decoding has caught up with the capture, so a pipe (| jq) sees each
// message at once without a write per record.
func (o *readOpts) setup(stdout io.Writer) (*dissect.Registry, sink, error) {
	held := int64(o.limits.MaxHeld)
	if held == 0 {
		held = dissect.DefaultHeldBudget
	}
	setMemoryLimit(held + o.lim.extra()) // what the other flags raise counts as held messages do
	stdout, err := o.outTarget(stdout)
	if err != nil {
		return nil, nil, err
	}
	popt := o.proto.options()
	o.lim.protocols(&popt)
	reg, err := all.Registry(popt)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range o.decodeAs {
		rule, err := reg.ParseDecodeAs(d)
		if err != nil {
			return nil, nil, usageError{err}
		}
		reg.AddRule(rule)
	}
	tf, ok := output.ParseTimeFormat(o.timeFormat)
	if !ok {
		return nil, nil, usageError{fmt.Errorf("--time-format %q: want one of %s", o.timeFormat, strings.Join(output.TimeFormats, ", "))}
	}
	switch o.progress {
	case "auto", "always", "never":
	default:
		return nil, nil, usageError{fmt.Errorf("--progress %q: want auto, always or never", o.progress)}
	}
	out, err := o.output(stdout, reg, tf)
	if err != nil {
		return nil, nil, err
	}
	if !o.q.active() {
		return reg, out, o.openOut()
	}
	o.q.memory = int64(o.lim.statsMem)
	q, err := o.q.build(reg, out)
	if err != nil {
		return nil, nil, err
	}
	q.stdout = stdout
	o.query = q
	return reg, q, o.openOut()
}

// output returns the writer of records the flags ask for; nil with -q.
func (o *readOpts) output(stdout io.Writer, reg *dissect.Registry, tf output.TimeFormat) (sink, error) {
	if err := o.tshark.apply(&o.format); err != nil {
		return nil, err
	}
	if err := checkFormFlags(o.tshark.flags, o.format); err != nil {
		return nil, err
	}
	if o.format != "fields" && (len(o.q.fields) > 0 || len(o.q.fieldOpts) > 0) {
		return nil, usageError{errors.New("-e and -E go with -o fields")}
	}
	if o.threads < 0 || o.threads > 1024 {
		return nil, usageError{fmt.Errorf("--threads %d: want 1 to 1024 (0: one per CPU)", o.threads)}
	}
	tt := terminalOf(stdout, os.Getenv)
	graph, err := o.q.drawGraph(tt.tty)
	if err != nil {
		return nil, err
	}
	o.statsTable = stats.TableOptions{Width: tt.width, ASCII: !tt.utf8, Hex: o.q.hex, Graph: graph, Hint: "--wide shows every column"}
	if o.wide {
		o.statsTable.Width = 0
	}
	if o.quiet {
		return nil, nil
	}
	if o.tshark.details {
		return o.treeOutput(stdout, !tt.utf8), nil
	}
	switch o.format {
	case "table":
		return output.NewTable(stdout, output.TableOptions{Time: tf, Location: localZone(os.LookupEnv), Width: o.statsTable.Width, ASCII: !tt.utf8, Hex: o.q.hex, Whole: o.wide}), nil
	case "json", "jsonl":
		if n := o.workers(); n > 1 {
			hex := o.q.hex
			return pipeline.NewParallel(stdout, func() pipeline.Appender { return output.NewJSONLines(hex) }, n, 0), nil
		}
		j := output.NewJSON(stdout, false)
		j.SetRaw(o.q.hex)
		return j, nil
	case "fields":
		return o.q.fieldsWriter(stdout, reg)
	case "parquet":
		return o.beside(o.parquetOutput(reg))
	case "mcap":
		return o.beside(o.mcapOutput(stdout, reg))
	case "foxglove":
		return o.foxgloveOutput(reg)
	}
	return nil, usageError{fmt.Errorf("--output %q: want table, json, fields, parquet, mcap or foxglove", o.format)}
}

// beside puts a writer of MCAP or Parquet on a goroutine of its own
// beside the decoder (pipeline.Beside) when --threads gives it a core of
// its own: more than 2, or 0 on more than 2 CPUs. With 2, the decoder and
// the writer's own workers (chunks, row groups) already keep two cores
// about equally busy, and the copy Beside makes cost more than it won
// (docs/performance-35-cpu.md, "The writers beside the decoder").
func (o *readOpts) beside(w sink, err error) (sink, error) {
	if err != nil || o.workers() <= 2 {
		return w, err
	}
	return pipeline.NewBeside(w, 0), nil
}

// workers is the number of goroutines formatting records (--threads).
func (o *readOpts) workers() int {
	if o.threads > 0 {
		return o.threads
	}
	return runtime.GOMAXPROCS(0)
}

// finish writes what comes after the records: the statistics (stdout)
// and the display filter's count (stderr).
func (o *readOpts) finish(stderr io.Writer) error {
	if o.query == nil {
		return nil
	}
	return o.query.finish(stderr, o.format == "json" || o.format == "jsonl", o.statsTable)
}

// startProfile starts the CPU profile asked for with --cpuprofile and
// returns the function that stops it.
func (o *readOpts) startProfile() (stop func(), err error) {
	if o.cpuProfile == "" {
		return func() {}, nil
	}
	pf, err := os.Create(o.cpuProfile)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		pf.Close()
	}, nil
}

// runRead reads capture files. SIGINT, SIGTERM and SIGHUP stop the
// reading (catchStops): what was read is decoded and written, the
// outputs completed and the summary written, as at the end of the input;
// endRun then says the run was interrupted, for exit status 128 + the
// signal's number. A second signal exits at once.
func runRead(cmd *cobra.Command, o *readOpts, files []string, stdin io.Reader, stderr io.Writer) error {
	if o.count < 0 {
		return usageError{fmt.Errorf("-c %d: want a number of packets, at least 1 (0: no limit)", o.count)}
	}
	ctx, caught, stopCatching := catchStops(cmd.Context(), stderr, os.Exit)
	defer stopCatching()
	o.fox.ctx, o.fox.stderr, o.fox.files = ctx, stderr, files
	reg, out, err := o.setup(cmd.OutOrStdout())
	if err != nil {
		return err
	}
	stopProfile, err := o.startProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	src := pipeline.NewFiles(files, stdin)
	defer src.Close()
	out = nameCaptures(out, src)
	cfg := o.pipelineConfig(reg, out)
	var bar *output.Progress
	// auto: only when stderr is a terminal and the records do not go to
	// a terminal too (their lines would run into the bar's), and not for
	// a pipe, which streams and has no size (stream.go).
	if o.progress == "always" || (o.progress == "auto" && isTerminal(stderr) &&
		(o.quiet || !isTerminal(o.recordsWriter(cmd.OutOrStdout()))) && !streamingInput(files, stdin)) {
		tt := terminalOf(stderr, os.Getenv)
		po := output.ProgressOptions{
			Width:   tt.width,
			ASCII:   !tt.utf8,
			Columns: func() int { return terminalOf(stderr, os.Getenv).width },
		}
		// Records to a pipe (| head): the bar waits a second, so a short
		// run, or a reader that prints its lines and quits, sees none.
		// Only -q and a regular file make the bar start at once.
		po.Immediate = o.quiet
		if f, ok := o.recordsWriter(cmd.OutOrStdout()).(*os.File); ok && !po.Immediate {
			fi, err := f.Stat()
			po.Immediate = err == nil && fi.Mode().IsRegular()
		}
		bar = output.NewProgress(stderr, po)
		cfg.Progress = func() {
			name, i, n, p, ok := src.Current()
			if !ok || p == nil {
				return
			}
			if n > 1 {
				name = fmt.Sprintf("%s (%d/%d)", name, i, n)
			}
			done, total := p.Progress()
			bar.Update(name, done, total)
		}
	}
	sum, err := pipeline.Run(ctx, src, cfg)
	if bar != nil {
		bar.Done()
	}
	o.interrupted = caught()
	return o.endRun(stderr, out, sum, err)
}

// pipelineConfig is the part of a run's configuration that the shared
// flags set.
func (o *readOpts) pipelineConfig(reg *dissect.Registry, out sink) pipeline.Config {
	// A filter and statistics need whole records, also with -q.
	cfg := pipeline.Config{Registry: reg, CountOnly: o.quiet && !o.q.active(), Packets: o.count, Raw: o.q.hex || o.q.raw, Workers: o.workers()}
	cfg.Limits = o.limits
	o.lim.pipeline(&cfg)
	if out != nil {
		cfg.Sink = out
	}
	return cfg
}
