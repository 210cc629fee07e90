package main

import (
	"os"
	"runtime/debug"

	"github.com/dissect-tools/dissect/dissect"
)

// Every structure the wire fills is bounded (docs/performance-12-23.md, "Bounded
// memory"), but together, at their bounds, they are live data the garbage
// collector would let grow to twice its size before collecting. A soft
// memory limit makes it collect sooner instead, so that a run at every
// bound at once stays under 256 MB of RSS (178 MB measured, against
// 292 MB without it): baseMemoryLimit, plus twice what --max-held-messages
// adds over its default. GOMEMLIMIT in the environment overrides it. A
// normal run holds far less (35-40 MB), so the limit costs it nothing.
const baseMemoryLimit = 160 << 20

// setMemoryLimit sets the run's soft memory limit for the held-message
// budget maxHeld (0: the default), unless GOMEMLIMIT is set.
func setMemoryLimit(maxHeld int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(memoryLimit(maxHeld))
}

// memoryLimit is the soft memory limit for the held-message budget
// maxHeld (0: the default).
func memoryLimit(maxHeld int64) int64 {
	extra := max(maxHeld-dissect.DefaultHeldBudget, 0)
	return baseMemoryLimit + 2*min(extra, 1<<40)
}
