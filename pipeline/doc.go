// Package pipeline owns a run of dissect, the same for capture files,
// live interfaces, serial taps and Wireshark's extcap capture:
//
//	source → tee (-w) → reassembly → dissectors → sink
//
// [Run] reads a [capture.Source] to its end, decodes every packet through
// reassembly and one [dissect.Stream] per stream, writes the records to a
// sink, ends every stream, flushes, and returns the [dissect.Summary] as
// plain data for a printer.
//
// Files ([Files]: several are read in order as one capture) are read in
// the caller's goroutine; nothing is ever dropped. Stdin and named pipes
// stream: when the pipe has no bytes ready, Files calls the run's idle
// hook ([IdleNotifier]) in that goroutine, which flushes the sink, so a
// record is written while the writer of the pipe waits for its next
// packet. A run without a sink
// (-q) with Config.Workers > 1 dissects on a second goroutine (staged.go).
// [Parallel] is a sink that formats records on a pool of goroutines and
// writes them in order; [Beside] runs another sink (a writer of MCAP or
// Parquet) on a goroutine of its own, in order.
//
// Live sources (Config.Live) are read by a capture goroutine that never
// waits for decoding or output: it writes the -w file ([Save]) itself,
// applies the stop rules (-c, -a duration, Ctrl-C, the reader of the output
// going away) and hands packets to decoding through a bounded queue of
// batches. When decoding falls behind and the queue is full, a packet is
// still written to -w, but only its headers are queued, marked
// [capture.Packet].Dropped, so that reassembly reports its payload as a gap
// of the right stream; when even the headers cannot be queued the packet
// is counted. Packets the kernel drops are counted from its statistics and
// their TCP bytes become gaps by their sequence numbers. On a stop, the
// capture drains what the source had already captured (up to the stop
// time), reads the kernel's counters after the last packet, and closes
// the source and -w; decoding then finishes the queue before the summary.
// [LiveConfig].Abort (a second Ctrl-C) ends the run at once. The extcap
// capture is this path with nothing decoded (an empty registry) and the
// -w writer on the fifo Wireshark reads ([NewSave]).
//
// No goroutine of a run outlives [Run], except after an abort, when the
// decoding goroutine may still be blocked writing to an output nobody
// reads; the caller then exits.
package pipeline
