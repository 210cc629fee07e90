package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/dissect"
)

// heldUsage documents --max-held-messages.
var heldUsage = fmt.Sprintf("bytes all streams together may hold for messages not yet whole (and for resyncs and detection): SIZE in bytes, or with K, M or G (KiB, MiB, GiB); past it, the oldest unfinished message is dropped as a skipped record that names this budget and is counted in the summary (default %s)", sizeString(dissect.DefaultHeldBudget))

// sizeFlag is a byte count given as SIZE: a number of bytes with an
// optional K, M or G (powers of 1024; KiB, MiB, GiB and KB, MB, GB are
// read the same).
type sizeFlag int64

func (f *sizeFlag) String() string {
	if *f == 0 {
		return ""
	}
	return sizeString(int64(*f))
}

func (f *sizeFlag) Type() string { return "SIZE" }

func (f *sizeFlag) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*f = sizeFlag(n)
	return nil
}

// parseSize reads SIZE (see sizeFlag): at least 1 byte, at most 1 TiB.
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	shift := 0
	if t != "" {
		switch t[len(t)-1] {
		case 'K':
			shift = 10
		case 'M':
			shift = 20
		case 'G':
			shift = 30
		}
		if shift > 0 {
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 1 || n > 1<<40>>shift {
		return 0, fmt.Errorf("%q: want a size in bytes, at least 1, optionally with K, M or G (e.g. 64M), at most 1T", s)
	}
	return n << shift, nil
}

// sizeString writes n as SIZE, in the largest unit that divides it.
func sizeString(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{30, "G"}, {20, "M"}, {10, "K"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.name)
		}
	}
	return strconv.FormatInt(n, 10)
}

// addHeldFlag adds --max-held-messages, which sets lim.MaxHeld.
func addHeldFlag(cmd *cobra.Command, lim *dissect.Limits) {
	cmd.Flags().Var((*sizeFlag)(&lim.MaxHeld), "max-held-messages", heldUsage)
}
