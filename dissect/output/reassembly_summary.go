package output

import (
	"io"

	"dissect/dissect/engine"
)

// writeReassembly writes the reassembly counters that point at capture
// problems (filled in once reassembly.Stats is settled).
func writeReassembly(w io.Writer, s *engine.Summary) {}
