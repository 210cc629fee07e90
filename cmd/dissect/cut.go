package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/capture/filter"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/pipeline"
)

// writeUsage is the help of -w: live capture, and files (cut.go).
const writeUsage = "save packets to this pcapng file. Live (-i): every packet captured, the records printed as well. " +
	"Files (-r), instead of printing the records: without -Y a copy of the packets (those -f lets through), as " +
	"tshark -r IN -w OUT does; with -Y the packets that carried the records the filter passes, with what they need " +
	"to decode the same again (their streams' handshakes, VRPN's cookie and names), so that 'dissect -Y FILTER OUT' " +
	"shows the same records; the input is read twice, so it must be a regular file that does not change meanwhile " +
	"(else nothing is written), and a signal leaves no cut (docs/display-filters.md)"

// addFileCutFlags adds -w and -f to a command that reads files only
// ('dissect read'); the root command has them as live flags.
func addFileCutFlags(cmd *cobra.Command, lo *liveOpts) {
	cmd.Flags().StringVarP(&lo.write, "write", "w", "", writeUsage)
	cmd.Flags().StringVarP(&lo.filter, "filter", "f", "", "capture filter in tcpdump syntax, run on each packet read; the others are ignored as if never captured: \"tcp port 3883 or udp port 3883\"")
}

// fileFlagNames are the live flags that also apply to files (cut.go).
var fileFlagNames = map[string]bool{"filter": true, "write": true}

// cutRequested reports whether a file run is asked to write packets (-w)
// or to filter them (-f).
func cutRequested(lo *liveOpts) bool { return lo.write != "" || lo.filter != "" }

// runCut reads capture files with -w and/or -f. Without -Y, the packets
// that -f lets through (all without it) are decoded as for -q and copied
// to -w as they are read. With -Y, the files are read twice: first decoded,
// the Cut marking the packets of the records the filter passes, then
// read again and the marked packets copied; so they must be files, not
// stdin.
func runCut(cmd *cobra.Command, o *readOpts, lo *liveOpts, files []string, stdin io.Reader, stderr io.Writer) error {
	if o.count < 0 {
		return usageError{fmt.Errorf("-c %d: want a number of packets, at least 1 (0: no limit)", o.count)}
	}
	if lo.write != "" {
		for _, name := range []string{"output", "field", "hex", "out"} {
			if cmd.Flags().Changed(name) {
				return usageError{fmt.Errorf("--%s: -w writes packets, not records: run without -w to see the records (dissect -Y FILTER %s)", name, lo.write)}
			}
		}
		o.quiet = true
	}
	twoPass := lo.write != "" && o.q.display != ""
	if twoPass {
		for _, f := range files {
			if err := readableTwice(f); err != nil {
				return err
			}
		}
	}
	if lo.write != "" {
		if st, err := os.Stat(lo.write); err == nil {
			for _, f := range files {
				if fi, err := os.Stat(f); err == nil && os.SameFile(st, fi) {
					return usageError{fmt.Errorf("-w %s is also an input file: writing would destroy it before it is read", lo.write)}
				}
			}
		}
	}
	var keep pipeline.KeepFunc
	if lo.filter != "" {
		m, err := filter.NewMatcher(lo.filter)
		if err != nil {
			return usageError{fmt.Errorf("-f: %w", err)}
		}
		keep = m.Match
	}
	exit := os.Exit
	if twoPass {
		// A second signal ends the process at once: the cut is not made.
		exit = func(code int) { _ = removeCut(lo.write); os.Exit(code) }
	}
	ctx, caught, stopCatching := catchStops(cmd.Context(), stderr, exit)
	defer stopCatching()
	reg, out, err := o.setup(cmd.OutOrStdout())
	if err != nil {
		return err
	}
	var pw *pipeline.PacketWriter
	if lo.write != "" {
		// Created first: a path that cannot be written fails before a
		// long read.
		if pw, err = pipeline.CreatePacketWriter(lo.write); err != nil {
			return err
		}
	}
	files = append([]string(nil), files...)
	src := &pipeline.CopySource{Files: pipeline.NewFiles(files, stdin), Keep: keep}
	defer src.Close()
	if !twoPass {
		src.W = pw
	}
	var cut *pipeline.Cut
	if twoPass {
		cut = pipeline.NewCut()
		cut.Decl = reg.Decl
		// The records the filter passes go to the Cut, not to stdout.
		o.query.out = cutSink{cut}
	}
	cfg := o.pipelineConfig(reg, out)
	cfg.Cut = cut
	sum, err := pipeline.Run(ctx, src, cfg)
	o.interrupted = caught()
	var cutNote string // why the cut was not made ("": it was)
	if cut != nil {
		cutNote, err = o.copyCut(ctx, caught, src.Files, keep, cut, pw, err)
		if n := cut.Forgotten(); n > 0 {
			fmt.Fprintf(stderr, "dissect: %s: %d packets were forgotten over the memory bounds (docs/display-filters.md); records may lack some of their packets or context\n", lo.write, n)
		}
	}
	if pw != nil {
		if cerr := pw.Close(); cerr != nil && err == nil {
			err = &pipeline.OutputError{Err: cerr}
		}
		if cut != nil && cutNote == "" && err == nil && pw.Written() < cut.Kept() {
			err = &pipeline.OutputError{Err: fmt.Errorf("%s: %d of the %d marked packets copied", lo.write, pw.Written(), cut.Kept())}
		}
		switch {
		case cutNote != "":
			if removeCut(pw.Path()) {
				cutNote += " (the file is removed)"
			}
			defer fmt.Fprintf(stderr, "dissect: %s: no cut written: %s\n", pw.Path(), cutNote)
		case !o.noSummary:
			defer fmt.Fprintf(stderr, "dissect: %s: %d of %d packets written\n", pw.Path(), pw.Written(), sum.Packets)
		}
	}
	return o.endRun(stderr, out, sum, err)
}

// copyCut makes the cut after the first reading (whose error is err):
// the second reading copies the marked packets, unless a signal stopped
// the first. It returns why the cut was not made ("": it was; a signal,
// the input changed) and the run's error.
func (o *readOpts) copyCut(ctx context.Context, caught func() os.Signal, read *pipeline.Files, keep pipeline.KeepFunc, cut *pipeline.Cut, pw *pipeline.PacketWriter, err error) (string, error) {
	if o.interrupted != nil {
		return fmt.Sprintf("stopped by %s while the input was read, before the copy", signalName(o.interrupted)), err
	}
	cerr := pipeline.CopyCut(ctx, read, keep, cut, pw)
	o.interrupted = caught()
	var oe *pipeline.OutputError
	var ce *pipeline.ChangedError
	switch {
	case o.interrupted != nil:
		return fmt.Sprintf("stopped by %s during the copy, after %d of %d marked packets", signalName(o.interrupted), pw.Written(), cut.Kept()), err
	case errors.As(cerr, &ce) && err == nil:
		return "the input changed", cerr // its line says how
	case errors.As(cerr, &ce):
		return "the input changed: " + ce.Err.Error(), err // after the first reading's error
	case errors.As(cerr, &oe) && err == nil:
		return "", cerr // read errors were the first reading's
	}
	return "", err
}

// readableTwice refuses an input of a cut (-Y with -w) that cannot be
// read twice: stdin, and what is not a regular file (a named pipe,
// /dev/stdin, a process substitution's /dev/fd/N, a device). An input
// that does not exist is reported by the run.
func readableTwice(name string) error {
	what := "stdin"
	if name != "-" {
		st, err := os.Stat(name)
		if err != nil || st.Mode().IsRegular() {
			return nil
		}
		what = "a pipe or a device"
	}
	return usageError{fmt.Errorf("-r %s with -Y and -w: the input is read twice (decoded, then the packets of the records copied), and %s cannot be read again; save it to a file first", name, what)}
}

// removeCut removes the -w file of a cut that was not made and reports
// whether it did; a path that is not a regular file (/dev/null, a pipe)
// is left alone.
func removeCut(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular() && os.Remove(path) == nil
}

// cutSink gives the records a display filter passes to a Cut.
type cutSink struct{ cut *pipeline.Cut }

func (c cutSink) Record(r *dissect.Record) error {
	c.cut.Keep(r)
	return nil
}

func (cutSink) Flush() error { return nil }
