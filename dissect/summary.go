package dissect

import "time"

// Summary is what one run saw and decoded, as plain data for a printer: the
// pipeline fills it, the output package prints it. Nothing in it refers to
// a capture source or to reassembly state.
type Summary struct {
	Packets int64 // packets decoded (captured packets that reached reassembly)
	Bytes   int64 // their captured bytes
	// First and Last are the earliest and latest packet times (packets
	// without a timestamp left out): the capture's span is Last − First.
	First time.Time
	Last  time.Time
	// NoTime counts packets the file gave no timestamp; each took the
	// previous packet's time.
	NoTime  int64
	Elapsed time.Duration // wall-clock time of the run

	Streams StreamCounts

	Messages     []TypeCount // per protocol and type, in order of first appearance
	Gaps         int64       // gap records
	GapBytes     int64
	Skipped      int64 // skipped records
	SkippedBytes int64
	// Held is the run-wide budget of held bytes ([HeldBudget]): what was
	// given up to it is in Skipped too, as skipped records whose reason
	// names the budget.
	Held     HeldCounts
	Warned   int64    // records that carry warnings
	Warnings []string // the first distinct warnings (bounded)
	Notes    []string // stream-level warnings (requests never answered, ...), bounded

	// Problems are the reassembly counters that point at capture problems
	// (out-of-order segments, bytes lost before capture, packets of an
	// encapsulation that is not decoded, ...), each with its count; zero
	// counts are left out.
	Problems []Count

	// Capture has the counters of a live or serial capture; nil for files.
	Capture *CaptureCounts
}

// HeldCounts describe the run-wide budget of the bytes streams hold for
// unfinished messages, resyncs, hunts and detection ([HeldBudget]).
type HeldCounts struct {
	Budget int64 // its size in bytes (0: no budget, e.g. a summary built by hand)
	Peak   int64 // the most bytes held at once (measured between calls; never above Budget)
	// Dropped counts the unfinished messages given up to stay within it;
	// DroppedBytes the held bytes given up (theirs, and bytes held for a
	// resync or a hunt that were skipped early).
	Dropped      int64
	DroppedBytes int64
}

// StreamCounts counts streams by transport.
type StreamCounts struct {
	TCP, UDP, Serial int64
}

// Total is the number of streams.
func (c StreamCounts) Total() int64 { return c.TCP + c.UDP + c.Serial }

// Count is a named counter.
type Count struct {
	What string
	N    int64
}

// CaptureCounts are the counters of a live capture or a serial tap: where
// each packet went. Captured = decoded + dropped by dissect (+ packets
// still queued when an immediate stop cut the run short).
type CaptureCounts struct {
	Source string // interface name or serial link

	// Kernel counters (live capture only; HasKernel false otherwise).
	HasKernel     bool
	PassedFilter  uint64 // packets that passed the filter, as the kernel counted them (delivered + dropped)
	KernelDropped uint64 // passed the filter but dropped by the kernel: its buffer was full

	Captured       int64 // packets dissect read from the source
	DissectDropped int64 // packets dissect read but could not queue for decoding: their payload bytes are gaps
	Untraced       int64 // of DissectDropped, those whose headers could not be kept either: counted only
	Written        int64 // packets written to the -w file(s)
	WritePath      string
	// With -b: the files kept, oldest first (WritePath is the last), and
	// how many older ones were deleted by files:N.
	WriteFiles   []string
	WriteDeleted int

	// Serial taps: bytes read from the ports that could not be queued (the
	// tap's own bound); they are gap records.
	SerialDroppedBytes int64

	// Stopped tells why the capture ended: "interrupted", "-c", "-a
	// duration", "-a packets", "end of input", "output closed", ...
	Stopped string
}

// MessageCount returns the total number of decoded messages.
func (s *Summary) MessageCount() int64 {
	var n int64
	for _, c := range s.Messages {
		n += c.Count
	}
	return n
}
