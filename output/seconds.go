package output

import (
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// The numeric times, time_epoch and time_relative (tshark's
// frame.time_epoch and frame.time_relative), are written as tshark writes
// them: seconds with nine fraction digits, "-" before a negative value
// (1763712499.479337000, 2.500000000). They are exact to the nanosecond:
// a float64 holds only about 16 significant digits, and an epoch time to
// the nanosecond needs 19.

// AppendEpochSeconds appends t as seconds since 1970 with nine fraction
// digits (time_epoch).
func AppendEpochSeconds(b []byte, t time.Time) []byte {
	return appendSeconds(b, t, time.Unix(0, 0))
}

// AppendRelativeSeconds appends r's time since the run's first packet
// (r.Time − r.Epoch) as seconds with nine fraction digits
// (time_relative); 0.000000000 when the run had no timestamped packet.
func AppendRelativeSeconds(b []byte, r *dissect.Record) []byte {
	if r.Epoch.IsZero() {
		return append(b, "0.000000000"...)
	}
	return appendSeconds(b, r.Time, r.Epoch)
}

// appendTimeKey appends the numeric time key ("time_epoch" or
// "time_relative") of r.
func appendTimeKey(b []byte, key string, r *dissect.Record) []byte {
	if key == "time_epoch" {
		return AppendEpochSeconds(b, r.Time)
	}
	return AppendRelativeSeconds(b, r)
}

// appendSeconds writes t − epoch exactly (see since) as seconds with nine
// fraction digits.
func appendSeconds(b []byte, t, epoch time.Time) []byte {
	neg, sec, ns := since(t, epoch)
	if neg && (sec > 0 || ns > 0) {
		b = append(b, '-')
	}
	b = appendUint(b, sec)
	b = append(b, '.')
	var d [9]byte
	for i := 8; i >= 0; i-- {
		d[i] = byte('0' + ns%10)
		ns /= 10
	}
	return append(b, d[:]...)
}
