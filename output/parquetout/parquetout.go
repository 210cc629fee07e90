// Package parquetout writes records into a Hive-partitioned Parquet lake:
//
//	DIR/proto=P/type=T/part-<run>-<seq>.parquet
//
// with one typed schema per (proto, type), for DuckDB, Spark, Polars and
// the like (docs/scale.md).
//
// # Layout
//
// P and T are the record's Proto and Type, escaped as Hive and Spark
// escape partition values: '%' followed by two upper-case hex digits for
// the control characters, DEL and " # % ' * / : = ? [ \ ] ^ {, so that a
// type such as "vrpn_Tracker Pos_Quat" stays one directory (spaces are
// kept) and "a/b" does not make two. DuckDB's hive_partitioning and Spark's
// partition discovery both decode %XX. A record without a protocol (a gap
// or skipped event on an unknown stream) goes to proto=__HIVE_DEFAULT_PARTITION__,
// Hive's name for a null partition value, which Spark and DuckDB read as NULL.
// The partition keys are not repeated inside the files.
//
// <run> is the UTC start time of the writer, its process id and 32 random
// bits (20260102T150405Z-1234-9f86d081); <seq> counts the parts of one
// partition in that run. Runs writing into the same lake at the same time
// (xargs -P, GNU parallel) therefore never collide. A part is written
// under a name ending in ".inprogress" and renamed to ".parquet" when it
// is complete, so a reader's "**/*.parquet" glob never sees half a file.
//
// # Schema
//
// Every part has the columns
//
//	capture    STRING                      Options.Capture / SetCapture
//	time       TIMESTAMP(NANOS)            Record.Time, UTC (see below)
//	transport  STRING                      tcp, udp, serial
//	stream     INT64
//	src, dst   STRING
//	offset     INT64
//	length     INT64
//	warnings   LIST<STRING>
//	extra_json STRING                      fields that do not fit, see below
//
// and one optional column per top-level field of the first record of its
// (proto, type) in this run, typed from the field's kind: int INT64, uint
// UINT64 (INT(64,false)), float and float32 DOUBLE, bool BOOLEAN, string
// STRING, bytes BYTE_ARRAY, time TIMESTAMP(NANOS), array LIST of the
// element type, object a struct (group) of optional fields. A field whose
// name is one of the common columns, "proto" or "type" is written as
// "f_<name>". Column order within a file is alphabetical (the library's
// dynamic groups sort their fields).
//
// A later record of the same (proto, type) is never lost: a null value
// fits any column; a field whose key has no column, whose kind differs
// (an int where the schema has a float, say), or a value the schema cannot
// hold (an array mixing kinds, an object with a new key) goes whole, with
// its key, into the row's extra_json column as a JSON object in the form of
// docs/output.md (bytes as hex, times as RFC 3339, NaN as "NaN", infinities as "Inf", "-Inf"). A field
// that is null (or an empty array) in the first record gets a STRING
// column that holds nulls; its later values go to extra_json.
//
// Times are UTC nanoseconds since 1970 in a TIMESTAMP(NANOS) column whose
// isAdjustedToUTC flag is false: DuckDB reads that as TIMESTAMP_NS and
// keeps the nanoseconds, while it reads a UTC-adjusted one as TIMESTAMP
// WITH TIME ZONE, truncated to microseconds. Read the values as UTC.
//
// # Memory
//
// Each open part buffers at most one row group (Options.RowGroupRows rows)
// before writing it out; at most Options.MaxOpen parts are open at once,
// beyond that the least recently used one is completed and a later record
// of its partition starts a new part with the same schema; a part that
// reaches Options.PartRows rows is completed too. Memory is thus bounded
// by MaxOpen row groups (and their footers) whatever the capture's size.
package parquetout

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/parquet-go/parquet-go"
)

// Options configures a [Writer]. The zero value is usable.
type Options struct {
	// Capture is written into the capture column until SetCapture
	// changes it: the capture file's name, typically.
	Capture string
	// RowGroupRows bounds a row group (default 65536).
	RowGroupRows int64
	// MaxOpen bounds the parts open at once (default 64).
	MaxOpen int
	// PartRows bounds a part file (default 1<<22 rows): the writer keeps
	// each row group's metadata until the footer, so a part of unbounded
	// length would grow the memory slowly.
	PartRows int64
}

// Writer writes records into a lake. It is not safe for concurrent use.
type Writer struct {
	dir     string
	o       Options
	capture string
	run     string
	schemas map[pkey]*schema
	open    map[pkey]*part
	tick    uint64
	err     error
}

type pkey struct{ proto, typ string }

// New returns a writer into the lake dir, which is created if missing.
func New(dir string, o Options) (*Writer, error) {
	if o.RowGroupRows <= 0 {
		o.RowGroupRows = 65536
	}
	if o.MaxOpen <= 0 {
		o.MaxOpen = 64
	}
	if o.PartRows <= 0 {
		o.PartRows = 1 << 22
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	run := fmt.Sprintf("%s-%d-%s", time.Now().UTC().Format("20060102T150405Z"), os.Getpid(), hex.EncodeToString(rnd[:]))
	return &Writer{dir: dir, o: o, capture: o.Capture, run: run,
		schemas: map[pkey]*schema{}, open: map[pkey]*part{}}, nil
}

// SetCapture sets the value of the capture column for the records that
// follow (call it when a run moves on to the next capture file).
func (w *Writer) SetCapture(name string) { w.capture = name }

// Record writes r. It keeps nothing of r after it returns.
func (w *Writer) Record(r *dissect.Record) error {
	if w.err != nil {
		return w.err
	}
	k := pkey{r.Proto, r.Type}
	p := w.open[k]
	if p != nil && p.rows >= w.o.PartRows {
		delete(w.open, k)
		if err := p.close(); err != nil {
			w.err = err
			return err
		}
		p = nil
	}
	if p == nil {
		s := w.schemas[k]
		if s == nil {
			s = newSchema(r.Fields)
			w.schemas[k] = s
		}
		if len(w.open) >= w.o.MaxOpen {
			if err := w.closeLRU(); err != nil {
				w.err = err
				return err
			}
		}
		var err error
		if p, err = w.newPart(k, s); err != nil {
			w.err = err
			return err
		}
		w.open[k] = p
	}
	w.tick++
	p.used = w.tick
	row := p.row
	clear(row)
	p.sc.reset()
	row["capture"] = w.capture
	row["time"] = r.Time.UnixNano()
	row["transport"] = r.Transport.String()
	row["stream"] = int64(r.Stream)
	row["src"] = r.Src
	row["dst"] = r.Dst
	row["offset"] = r.Offset
	row["length"] = r.Length
	if len(r.Warnings) > 0 {
		ws := make([]any, len(r.Warnings))
		for i, s := range r.Warnings {
			ws[i] = s
		}
		row["warnings"] = ws
	}
	extra := p.extra[:0]
	for i := range r.Fields {
		f := &r.Fields[i]
		name := columnName(f.Key)
		c, ok := p.s.cols[name]
		if _, dup := row[name]; ok && !dup && c.fits(f.Value) {
			row[name] = p.sc.toAny(f.Value)
			continue
		}
		extra = append(extra, *f) // no column, another kind, or a repeated key
	}
	p.extra = extra[:0]
	if len(extra) > 0 {
		p.jbuf = appendJSONObject(p.jbuf[:0], extra)
		row["extra_json"] = ptr(&p.sc.s, string(p.jbuf))
	}
	p.one[0] = row
	if _, err := p.w.Write(p.one[:]); err != nil {
		w.err = fmt.Errorf("parquet %s: %w", p.tmp, err)
		return w.err
	}
	p.rows++
	return nil
}

// Flush does nothing: row groups are written when full and parts are
// completed by Close, so that a live run's frequent flushes do not make
// many small files. It is there to make Writer a sink of the CLI.
func (w *Writer) Flush() error { return w.err }

// Close completes every open part (writes its footer and gives it its
// .parquet name). The writer is not usable afterwards.
func (w *Writer) Close() error {
	var errs []error
	if w.err != nil {
		errs = append(errs, w.err)
	}
	for k, p := range w.open {
		if err := p.close(); err != nil {
			errs = append(errs, err)
		}
		delete(w.open, k)
	}
	w.err = errors.New("parquetout: writer closed")
	return errors.Join(errs...)
}

func (w *Writer) closeLRU() error {
	var lk pkey
	var lp *part
	for k, p := range w.open {
		if lp == nil || p.used < lp.used {
			lk, lp = k, p
		}
	}
	delete(w.open, lk)
	return lp.close()
}

type part struct {
	s     *schema
	f     *os.File
	w     *parquet.GenericWriter[map[string]any]
	tmp   string
	final string
	used  uint64
	rows  int64
	row   map[string]any
	one   [1]map[string]any
	extra []dissect.Field
	jbuf  []byte
	sc    scratch
}

func (w *Writer) newPart(k pkey, s *schema) (*part, error) {
	proto := k.proto
	if proto == "" {
		proto = hiveNull
	}
	typ := k.typ
	if typ == "" {
		typ = hiveNull
	}
	dir := filepath.Join(w.dir, "proto="+EscapePartition(proto), "type="+EscapePartition(typ))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	s.seq++
	final := filepath.Join(dir, fmt.Sprintf("part-%s-%d.parquet", w.run, s.seq))
	tmp := final + ".inprogress"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, err
	}
	pw := parquet.NewGenericWriter[map[string]any](f, s.schema,
		parquet.MaxRowsPerRowGroup(w.o.RowGroupRows),
		parquet.Compression(&parquet.Zstd),
		parquet.CreatedBy("dissect", "", ""))
	return &part{s: s, f: f, w: pw, tmp: tmp, final: final, row: map[string]any{}}, nil
}

func (p *part) close() error {
	err := p.w.Close()
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p.tmp, p.final)
	}
	if err != nil {
		return fmt.Errorf("parquet %s: %w", p.final, err)
	}
	return nil
}

// hiveNull is Hive's directory value for a null (here: empty) partition key.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// EscapePartition escapes a Hive partition value as Hive and Spark do
// (ExternalCatalogUtils.escapePathName): control characters, DEL and
// " # % ' * / : = ? [ \ ] ^ { become %XX.
func EscapePartition(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?[\\]^{", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// reserved are the common column names (and the partition keys): a field
// of that name is written as f_<name>.
var reserved = map[string]bool{
	"capture": true, "time": true, "transport": true, "stream": true, "src": true,
	"dst": true, "offset": true, "length": true, "warnings": true, "extra_json": true,
	"proto": true, "type": true,
}

func columnName(key string) string {
	if reserved[key] || strings.HasPrefix(key, "f_") && reserved[key[2:]] {
		return "f_" + key
	}
	return key
}
