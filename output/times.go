package output

import (
	"fmt"
	"math"
	"time"
)

// Instants outside the years 0000–9999 (a corrupt timestamp, a pcapng
// if_tsoffset near ±2^63) cannot be written in RFC 3339. Absolute times, in
// JSON and in the table, are clamped to that range: earlier ones are
// written as 0000-01-01T00:00:00.000000000Z, later ones as
// 9999-12-31T23:59:59.999999999Z.
const (
	minUnix = -62167219200 // 0000-01-01T00:00:00Z
	maxUnix = 253402300799 // 9999-12-31T23:59:59Z
)

// clampTime returns t, or the nearer end of the years 0000–9999 when t is
// outside them.
func clampTime(t time.Time) time.Time {
	if lo := time.Unix(minUnix, 0); t.Before(lo) {
		return lo.UTC()
	}
	if hi := time.Unix(maxUnix, 999999999); t.After(hi) {
		return hi.UTC()
	}
	return t
}

// since returns t − epoch exactly as a sign, whole seconds and
// nanoseconds, where time.Time.Sub saturates at about ±292 years. Only a
// difference beyond ±2^63 seconds (which time.Time can hold) saturates.
func since(t, epoch time.Time) (neg bool, sec uint64, ns int) {
	ds := t.Unix() - epoch.Unix() // exact modulo 2^64, even where Unix wraps
	dn := t.Nanosecond() - epoch.Nanosecond()
	after := t.After(epoch)
	switch {
	case after && (ds < 0 || ds == 0 && dn <= 0):
		return false, math.MaxInt64, 999999999 // wrapped: beyond +2^63 s
	case !after && (ds > 0 || ds == 0 && dn > 0):
		return true, 1 << 63, 0 // wrapped: beyond −2^63 s
	}
	if ds > 0 || ds == 0 && dn >= 0 {
		if dn < 0 {
			ds, dn = ds-1, dn+1e9
		}
		return false, uint64(ds), dn
	}
	// Negative: the magnitude is −ds − dn/1e9.
	mag := uint64(-(ds + 1)) + 1 // −ds without overflow at math.MinInt64
	if dn > 0 {
		mag, dn = mag-1, 1e9-dn
	} else {
		dn = -dn
	}
	return true, mag, dn
}

// appendSince writes t − epoch as seconds with six fraction digits
// (truncated), "-" before a negative difference.
func appendSince(b []byte, t, epoch time.Time) []byte {
	neg, sec, ns := since(t, epoch)
	if neg && (sec > 0 || ns >= 1000) {
		b = append(b, '-')
	}
	b = appendUint(b, sec)
	b = append(b, '.')
	return appendFrac(b, ns/1000)
}

func appendUint(b []byte, u uint64) []byte {
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	return append(b, d[i:]...)
}

// spanText writes last − first for the summary: a duration rounded to the
// microsecond ("3.5s", "2h0m1s"), or a number of years beyond what a
// time.Duration holds.
func spanText(first, last time.Time) string {
	neg, sec, ns := since(last, first)
	if sec < 1<<33 { // about 272 years
		d := time.Duration(sec)*time.Second + time.Duration(ns)
		if neg {
			d = -d
		}
		return d.Round(time.Microsecond).String()
	}
	// In floating point, where since saturates (beyond 2^63 s).
	years := (float64(last.Unix()) - float64(first.Unix())) / (365.2425 * 86400)
	return fmt.Sprintf("%.4g years", years)
}
