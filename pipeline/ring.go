package pipeline

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Ring is -b: when a -w capture goes on in a new file, and how many files
// it keeps, as dumpcap does. The zero Ring writes one file.
type Ring struct {
	FileSize int64         // bytes: the next packet goes to a new file once a file holds this many (0: no limit)
	Duration time.Duration // a packet this long after a file's first goes to a new file (0: no limit)
	Packets  int64         // packets per file (0: no limit)
	Files    int           // files kept: the oldest is deleted when a new one would make more (0: all)
}

// Active reports whether r switches files at all.
func (r Ring) Active() bool { return r.FileSize > 0 || r.Duration > 0 || r.Packets > 0 }

// maxRingFiles bounds files:N, like dumpcap's limit.
const maxRingFiles = 100000

// ParseRing reads -b options in tshark's syntax: filesize:KB (kB of 1000
// bytes, as dumpcap counts), duration:SECONDS, packets:N and files:N. A
// repeated option keeps its last value. files:N needs one of the others.
func ParseRing(opts []string) (Ring, error) {
	var r Ring
	for _, o := range opts {
		key, val, ok := strings.Cut(o, ":")
		if !ok {
			return r, fmt.Errorf("-b %q: want filesize:KB, duration:SECONDS, packets:N or files:N", o)
		}
		n, nerr := strconv.ParseInt(val, 10, 64)
		positive := nerr == nil && n > 0
		switch key {
		case "filesize":
			if !positive || n > 1<<40/1000 {
				return r, fmt.Errorf("-b %q: want a size in kB (1 kB = 1000 bytes), at least 1", o)
			}
			r.FileSize = n * 1000
		case "duration":
			d, err := strconv.ParseFloat(val, 64)
			if err != nil || !(d > 0) || d > 1e9 {
				return r, fmt.Errorf("-b %q: want a positive number of seconds", o)
			}
			r.Duration = time.Duration(d * float64(time.Second))
		case "packets":
			if !positive {
				return r, fmt.Errorf("-b %q: want a number of packets, at least 1", o)
			}
			r.Packets = n
		case "files":
			if !positive || n > maxRingFiles {
				return r, fmt.Errorf("-b %q: want a number of files from 1 to %d", o, maxRingFiles)
			}
			r.Files = int(n)
		default:
			return r, fmt.Errorf("-b %q: option %q is not supported; use filesize:KB, duration:SECONDS, packets:N or files:N", o, key)
		}
	}
	if len(opts) > 0 && !r.Active() {
		return r, errors.New("-b files:N needs filesize:KB, duration:SECONDS or packets:N to say when to go on in a new file")
	}
	return r, nil
}

// ringName is the name of the seq'th file of a ring written for path, as
// dumpcap makes it: the name without its extension, the number in five
// digits and the local time the file was created, then the extension:
// rig.pcapng becomes rig_00001_20261126191000.pcapng.
func ringName(path string, seq int, t time.Time) string {
	ext := filepath.Ext(path)
	if ext == filepath.Base(path) { // a dot file: no extension
		ext = ""
	}
	stem := strings.TrimSuffix(path, ext)
	return fmt.Sprintf("%s_%05d_%s%s", stem, seq, t.Format("20060102150405"), ext)
}
