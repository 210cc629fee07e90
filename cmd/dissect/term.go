package main

import (
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"
)

// terminal describes where output goes: whether it is a terminal, how wide
// it is, and whether it can show UTF-8.
type terminal struct {
	tty   bool
	width int // columns; 0: unlimited (not a terminal and no COLUMNS)
	utf8  bool
}

// defaultWidth is assumed for a terminal whose size cannot be read.
const defaultWidth = 80

// terminalOf describes w. The width is COLUMNS when it is set to a positive
// number (as less, git and tshark's users expect), else the terminal's size,
// else 80 on a terminal and unlimited on a pipe or file. getenv is
// os.Getenv outside tests.
func terminalOf(w io.Writer, getenv func(string) string) terminal {
	t := terminal{utf8: utf8Locale(getenv)}
	f, ok := w.(*os.File)
	if ok {
		t.tty = term.IsTerminal(int(f.Fd()))
	}
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		t.width = n
		return t
	}
	if t.tty {
		t.width = defaultWidth
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			t.width = cols
		}
	}
	return t
}

// utf8Locale reports whether the locale asks for UTF-8, as the C library
// decides it: the first of LC_ALL, LC_CTYPE and LANG that is set names the
// locale, and "C", "POSIX" or a name without UTF-8 mean ASCII. With none
// set, UTF-8 is assumed (most terminals today; Go programs have no locale).
func utf8Locale(getenv func(string) string) bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		v := getenv(k)
		if v == "" {
			continue
		}
		v = strings.ToLower(v)
		return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
	}
	return true
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// localZone is the zone of the table's local times (-t a, ad, adoy), as
// the C library takes it: TZ when set ("" or "UTC0": UTC, ":NAME" or
// NAME: that zone of the system's database), else the system's zone.
// Read at each run (not once per process as time.Local), so that tests
// may set TZ. lookup is os.LookupEnv outside tests.
func localZone(lookup func(string) (string, bool)) *time.Location {
	tz, set := lookup("TZ")
	if !set {
		return time.Local
	}
	tz = strings.TrimPrefix(tz, ":")
	if tz == "" || tz == "UTC0" {
		return time.UTC
	}
	if loc, err := time.LoadLocation(tz); err == nil {
		return loc
	}
	return time.Local
}
