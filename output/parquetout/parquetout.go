// Package parquetout writes records into a Hive-partitioned Parquet lake:
//
//	DIR/proto=P/type=T/part-<run>-<seq>.parquet
//
// with one typed schema per declared record type ([dissect.TypeDecl]), for
// DuckDB, Spark, Polars and the like (docs/scale.md).
//
// # Layout
//
// P is the record's Proto. T is its type, as in -o json, so that a
// reader's type column (DuckDB's hive_partitioning) is the record's
// type: the declared type of the declaration the record matches
// ([Options.Decl]), the record's own type for a "*" declaration or a
// record no declaration matches. The variants of a type (HandControl's
// "GetSettings" request and response, told apart by their "role" field)
// are declarations of their own, with their own fields: each has its own
// files in the type's directory, with its own schema, and the variant's
// key is one of the declared fields, a column like the others (read the
// directory with union_by_name). Both are escaped as Hive and Spark escape
// partition values: '%' followed by two upper-case hex digits for the
// control characters, DEL and " # % ' * / : = ? [ \ ] ^ {, so that a type
// such as "vrpn_Tracker Pos_Quat" stays one directory (spaces are kept)
// and "a/b" does not make two. DuckDB's hive_partitioning and Spark's
// partition discovery both decode %XX. A record without a protocol (a gap
// or skipped event on an unknown stream) goes to proto=__HIVE_DEFAULT_PARTITION__,
// Hive's name for a null partition value, which Spark and DuckDB read as NULL.
// The partition keys are not repeated inside the files, but where the
// partition does not name the type, its files have a record_type column
// with each record's type: the names from the wire are bounded in number
// and length (Options.MaxPartitions; partition.go), and beyond the bounds
// records go to proto=P/type=__overflow__, and a name too long for a
// directory is shortened to a prefix and a hash.
//
// <run> is the UTC start time of the writer, its process id and 32 random
// bits (20260102T150405Z-1234-9f86d081), or Options.PartID; <seq> counts
// the parts of one partition in that run. Runs writing into the same lake
// at the same time (xargs -P, GNU parallel) therefore never collide. A part is written
// under a name ending in ".inprogress" and renamed to ".parquet" when it
// is complete, so a reader's "**/*.parquet" glob never sees half a file.
//
// # Schema
//
// Every part has the columns of the envelope ([dissect.Envelope], its
// JSON keys but the partitions' proto and type, in its order), then its
// own:
//
//	time       TIMESTAMP(NANOS)            Record.Time, UTC (see below)
//	transport  STRING                      tcp, udp, serial
//	stream     INT64
//	src, dst   STRING
//	offset     INT64
//	length     INT64
//	warnings   LIST<STRING>
//	extra_json STRING                      what departs from the declaration
//	capture    STRING                      Options.Capture / SetCapture
//
// and one optional column per top-level field the declaration declares,
// whether or not the first record has it, typed from the declared kind:
// int INT64, uint UINT64 (INT(64,false)), float64 DOUBLE, float32 FLOAT,
// bool BOOLEAN, string STRING, bytes BYTE_ARRAY, time TIMESTAMP(NANOS),
// array LIST of its items' type (items required: lists of lists nest),
// object a struct (group) of its declared keys, each optional. Parquet
// has no empty group: an object declared without keys is a STRING column
// holding its JSON, "{}". A field whose name is one of the common columns,
// "proto", "type" or "record_type" is written as "f_<name>". The columns
// are in the order of -o json's keys: time, transport, stream, src, dst,
// offset, length, record_type where there is one, the declared fields in
// declaration order (a struct's keys in theirs), then warnings,
// extra_json and capture; a reader's hive partitioning adds proto and
// type.
//
// A record is never lost. An absent field is a null. A field that departs
// from its declaration (a key not declared or repeated, a value of
// another kind at any depth, a float64 where float32 is declared, a null)
// goes whole, with its key, into the row's extra_json column as a JSON
// object in the form of -o json (docs/output.md), and a record that no
// declaration matches has all its fields there. Both are a protocol's bug:
// [Writer.ExtraRows] counts such rows, and for records as declared
// extra_json is null. Enums and required keys do not matter to the
// columns.
//
// Times are UTC nanoseconds since 1970 in a TIMESTAMP(NANOS) column whose
// isAdjustedToUTC flag is false: DuckDB reads that as TIMESTAMP_NS and
// keeps the nanoseconds, while it reads a UTC-adjusted one as TIMESTAMP
// WITH TIME ZONE, truncated to microseconds. Read the values as UTC.
//
// # Writing
//
// A declaration's schema and the map from its declared fields to leaf
// columns and Parquet levels are built once, the first time a record
// matches it. A part collects its row group column by column (columns.go):
// a record's keys are matched to the declared ones in order and each
// value is appended, with its levels, to its leaf column's typed slice;
// strings and bytes are copied, repeated values (the capture, a stream's
// addresses, levels) kept as runs. No row is assembled and, once a part's
// slices have a row group's size, nothing is allocated per record. A full
// row group goes to one of Options.Workers goroutines, which encodes and
// compresses it with parquet-go's column writers (codec.go) and
// appends it to the part's file, while the caller fills the part's other
// row group; a part has one row group with a worker at a time, so its row
// groups are in the order of its records. Close waits for the workers
// and ends them.
//
// # Memory
//
// Each open part collects at most one row group (Options.RowGroupRows
// rows, or maxBatchBytes of values and strings) while its previous one
// waits for a worker or is being written; at most Options.MaxOpen parts are open at once,
// beyond that the least recently used one is completed and a later record
// of its partition starts a new part with the same schema; a part that
// reaches Options.PartRows rows is completed too. The row groups being
// collected are cut smaller when many parts are open (openBatchBytes over
// the parts open, batchLimit). Memory is thus bounded by twice the open
// parts' row groups (and their footers) whatever the capture's size,
// and the tables the writer knows by the declarations and MaxPartitions
// (each known by at most 255 bytes of its name) whatever the types the
// wire names.
package parquetout

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
	"github.com/parquet-go/parquet-go"
)

// Options configures a [Writer]. The zero value is usable.
type Options struct {
	// Decl returns the declaration a record matches, nil for none
	// (dissect.Registry.Decl). Without it every record is undeclared:
	// common columns and extra_json only. As with Registry.Decl, the
	// declaration must depend only on the record's proto and type, and on
	// its fields only where it returns one with a Variant or nil: the
	// writer asks once per proto and type for the others (tableCache).
	Decl func(*dissect.Record) *dissect.TypeDecl
	// Capture is written into the capture column until SetCapture
	// changes it: the capture file's name, typically.
	Capture string
	// Raw adds the column raw (BINARY): each record's bytes
	// (dissect.Record.Raw; null for a gap), as -x adds "raw" to JSON. A
	// name the wire sent as invalid UTF-8, written valid in the string
	// columns (output.ValidUTF8), keeps its bytes there.
	Raw bool
	// RowGroupRows bounds a row group (default 65536).
	RowGroupRows int64
	// MaxOpen bounds the parts open at once (default 64).
	MaxOpen int
	// PartRows bounds a part file (default 1<<22 rows): the writer keeps
	// each row group's metadata until the footer, so a part of unbounded
	// length would grow the memory slowly.
	PartRows int64
	// MaxPartitions bounds the partitions named by the wire (a "*"
	// declaration's or undeclared records' own types) in a run (default
	// DefaultMaxPartitions); the records of further types go to their
	// protocol's overflow partition (see partition.go's comment).
	MaxPartitions int
	// PartID, when set, replaces the run's start time, pid and random
	// bits in the part names (part-<PartID>-<seq>.parquet; ValidPartID
	// says which IDs are allowed). A run given an ID derived from its
	// input (scale/dask_ingest.py: a hash of the capture) writes the
	// same names each time, so rerunning it replaces its parts instead of
	// adding copies. Two runs with one ID must not write into one lake at
	// the same time, and a killed run's .inprogress files must be removed
	// before a rerun (the part is created exclusively).
	PartID string
	// Workers is how many goroutines encode and compress row groups
	// while records are written (default DefaultWorkers); 1 writes them
	// in Record, Flush and Close, with no goroutine. Close stops them.
	Workers int
	// CreatedBy is the files' created_by: the writing application, in
	// Parquet's "NAME version VERSION (build HASH)" form that readers
	// (parquet-mr, Arrow) parse (default "dissect").
	CreatedBy string
	// Compression is the pages' codec, one of Compressions (default
	// the first, snappy).
	Compression string
}

// DefaultWorkers is the default of Options.Workers.
const DefaultWorkers = 2

// maxBatchBytes bounds the memory of a row group being collected (its
// values and strings, batch.size): a row group of large records (long
// arrays, long strings) is written before it has RowGroupRows rows. It
// also bounds the garbage collector's share: a busy table holds two row
// groups, and a worker's page buffers grow with the row group, so
// that at 64 MiB the 50 MB Deltarobot capture (three busy tables of 14
// columns, row groups of 65,536 rows, 6.3 MB) peaked at 87-96 MB of RSS
// and at 4 MiB (about 43,000 rows) at 80 MB, in the same time, with
// files 5% larger (docs/performance-12-23.md).
const maxBatchBytes = 4 << 20

// openBatchBytes bounds the row groups being collected by all the open
// parts together: with many tables busy at once (a capture naming many
// types) each part's row group is cut at openBatchBytes over the parts
// open, down to minBatchBytes, so that memory does not grow with
// MaxOpen. With 64 tables of 1 KB rows busy at once peak RSS was 674 MB
// with every part's at maxBatchBytes (docs/performance-35-channels.md); a capture
// of a few busy tables (the Deltarobot captures: 9 open, 3 busy) keeps
// maxBatchBytes.
const (
	openBatchBytes = 48 << 20
	minBatchBytes  = 256 << 10
)

// batchLimit is the size at which the open parts' row groups are written.
func (w *Writer) batchLimit() int {
	return min(maxBatchBytes, max(minBatchBytes, openBatchBytes/max(len(w.open), 1)))
}

// Writer writes records into a lake. It is not safe for concurrent use.
type Writer struct {
	dir     string
	o       Options
	capture string
	run     string
	plans   map[pkey]*plan
	tables  map[tkey]*table
	// declared is the last table of each declared type's records (by
	// proto, the only other part of its key).
	declared map[*dissect.TypeDecl]*table
	wire     int            // tables named by the wire, at most MaxPartitions
	over     int64          // records written to an overflow partition
	short    int            // partitions whose name was shortened
	open     []*table       // the tables with an open part
	seq      map[string]int // parts so far per partition directory
	rb       rowBuilder
	props    []parquet.WriterOption // the files' (codec.go)
	pool     *pool                  // nil with one worker: row groups written by Record
	scratch  scratch                // of the row groups written without pool
	tick     uint64
	extra    int64
	cache    tableCache
	err      error
}

// tkey names a table: a record's proto and type, and the declaration it
// matches (variants of one type are different declarations). typ is the
// type's SHA-256 when long is set (keyType); an overflow partition's key
// has the empty type and overflow set.
type tkey struct {
	proto, typ     string
	decl           *dissect.TypeDecl
	long, overflow bool
}

// pkey names a plan: a declaration's schema, with or without the
// record_type column.
type pkey struct {
	decl  *dissect.TypeDecl
	typed bool
}

// table is one partition of the lake: proto=P/type=T.
type table struct {
	plan     *plan
	proto    string // the records' proto
	dir      string
	part     *part // the open part, or nil
	overflow bool
}

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
	if o.MaxPartitions <= 0 {
		o.MaxPartitions = DefaultMaxPartitions
	}
	if err := ValidPartID(o.PartID); o.PartID != "" && err != nil {
		return nil, err
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	codec, err := codecOf(o.Compression)
	if err != nil {
		return nil, fmt.Errorf("parquetout: %w", err)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	run := fmt.Sprintf("%s-%d-%s", time.Now().UTC().Format("20060102T150405Z"), os.Getpid(), hex.EncodeToString(rnd[:]))
	if o.PartID != "" {
		run = o.PartID
	}
	w := &Writer{dir: dir, o: o, capture: o.Capture, run: run,
		plans: map[pkey]*plan{}, tables: map[tkey]*table{}, declared: map[*dissect.TypeDecl]*table{}, seq: map[string]int{},
		rb: rowBuilder{json: output.NewJSONAppender()}, props: writerOptions(o.CreatedBy, codec)}
	if o.Workers > 1 {
		w.pool = newPool(o.Workers, o.MaxOpen)
	}
	return w, nil
}

// SetCapture sets the value of the capture column for the records that
// follow (call it when a run moves on to the next capture file).
func (w *Writer) SetCapture(name string) { w.capture = name }

// ExtraRows returns the number of rows written so far with an extra_json:
// records that no declaration matches or that depart from theirs, a
// protocol's bug. It is zero when every record is as declared.
func (w *Writer) ExtraRows() int64 { return w.extra }

// Overflowed returns the number of records written so far to an overflow
// partition: records of types named by the wire beyond the first
// Options.MaxPartitions, each with its type in the record_type column.
func (w *Writer) Overflowed() int64 { return w.over }

// Shortened returns the number of partitions whose name was too long for
// a directory and was shortened with a hash (their record_type column
// holds the full type).
func (w *Writer) Shortened() int { return w.short }

// MaxPartitions returns the bound on the partitions named by the wire.
func (w *Writer) MaxPartitions() int { return w.o.MaxPartitions }

// Record writes r. It keeps nothing of r after it returns.
func (w *Writer) Record(r *dissect.Record) error {
	if w.err != nil {
		return w.err
	}
	t, err := w.tableOf(r)
	if err != nil {
		w.err = err
		return err
	}
	if t.overflow {
		w.over++
	}
	p := t.part
	if p != nil && p.rows >= w.o.PartRows {
		if err := w.closePart(t); err != nil {
			return err
		}
		p = nil
	}
	if p == nil {
		if len(w.open) >= w.o.MaxOpen {
			if err := w.closePart(w.lru()); err != nil {
				return err
			}
		}
		var err error
		if p, err = w.newPart(t); err != nil {
			w.err = err
			return err
		}
		t.part = p
		w.open = append(w.open, t)
	}
	w.tick++
	p.used = w.tick
	if w.rb.build(p.cur, t.plan, r, w.capture) {
		w.extra++
	}
	p.rows++
	if int64(p.cur.rows) >= w.o.RowGroupRows || p.cur.size >= w.batchLimit() {
		if err := w.flush(p); err != nil {
			w.err = fmt.Errorf("parquet %s: %w", p.tmp, err)
			return w.err
		}
	}
	return nil
}

// table returns the table of r, which matches d. The table of a
// declared type is found by the declaration's pointer (most records).
func (w *Writer) table(r *dissect.Record, d *dissect.TypeDecl) (*table, error) {
	if !wireNamed(d) {
		if t := w.declared[d]; t != nil && t.proto == r.Proto {
			return t, nil
		}
	}
	k := tkey{proto: r.Proto, decl: d}
	typ := output.ValidUTF8(r.Type) // the wire's name, as JSON writes it
	if wireNamed(d) {
		k.typ, k.long = keyType(typ)
	} else {
		k.typ = typ
	}
	t := w.tables[k]
	if t == nil && wireNamed(d) && w.wire >= w.o.MaxPartitions {
		k = tkey{proto: r.Proto, decl: d, overflow: true}
		t = w.tables[k]
	}
	if t == nil {
		var err error
		if t, err = w.newTable(k, typ); err != nil {
			return nil, err
		}
	}
	if !wireNamed(d) {
		w.declared[d] = t
	}
	return t, nil
}

// newTable returns the table of k, made from its declaration's plan; typ
// is the record's type.
func (w *Writer) newTable(k tkey, typ string) (*table, error) {
	proto := k.proto
	switch {
	case k.overflow && k.decl == nil:
		typ = overflowUndeclaredType
	case k.overflow:
		typ = overflowType
	case !wireNamed(k.decl):
		typ = k.decl.Type // the variants of a type share its directory
	}
	if proto == "" {
		proto = hiveNull
	}
	if typ == "" {
		typ = hiveNull
	}
	pdir, _ := dirName("proto", proto) // protocol names are the registry's
	tdir, short := dirName("type", typ)
	pk := pkey{decl: k.decl, typed: short || k.overflow}
	pl := w.plans[pk]
	if pl == nil {
		var err error
		if pl, err = newPlan(k.decl, pk.typed, w.o.Raw); err != nil {
			return nil, err
		}
		w.plans[pk] = pl
	}
	if short {
		w.short++
	}
	if wireNamed(k.decl) && !k.overflow {
		w.wire++
	}
	t := &table{plan: pl, proto: k.proto, dir: filepath.Join(w.dir, pdir, tdir), overflow: k.overflow}
	w.tables[k] = t
	return t, nil
}

// Flush does nothing: row groups are written when full and parts are
// completed by Close, so that a live run's frequent flushes do not make
// many small files. It is there to make Writer a sink of the CLI.
func (w *Writer) Flush() error { return w.err }

// Close completes every open part (writes its footer and gives it its
// .parquet name); a part that cannot be completed is removed. The first
// error is returned, with the number of others. The writer is not usable
// afterwards.
func (w *Writer) Close() error {
	var errs []error
	if w.err != nil {
		errs = append(errs, w.err)
	}
	for _, t := range w.open {
		if err := w.close(t.part); err != nil {
			errs = append(errs, err)
		}
		t.part = nil
	}
	w.open = nil
	if w.pool != nil {
		w.pool.stop()
		w.pool = nil
	}
	w.err = errors.New("parquetout: writer closed")
	if len(errs) > 1 { // one line: a full disk fails every open part alike
		return fmt.Errorf("%w (and %d more errors)", errs[0], len(errs)-1)
	}
	return errors.Join(errs...)
}

// lru returns the open table used least recently.
func (w *Writer) lru() *table {
	var l *table
	for _, t := range w.open {
		if l == nil || t.part.used < l.part.used {
			l = t
		}
	}
	return l
}

// closePart completes t's open part.
func (w *Writer) closePart(t *table) error {
	for i, o := range w.open {
		if o == t {
			w.open = append(w.open[:i], w.open[i+1:]...)
			break
		}
	}
	err := w.close(t.part)
	t.part = nil
	if err != nil {
		w.err = err
	}
	return err
}

type part struct {
	f     *os.File
	fw    *parquet.Writer
	tmp   string
	final string
	used  uint64
	rows  int64
	specs []colSpec
	cur   *batch // the row group being filled
	spare *batch // the other one, nil while a worker writes it
	// busy is closed when the row group a worker writes is written; nil
	// when none is. err is that row group's error, read after busy.
	busy chan struct{}
	err  error
}

func (w *Writer) newPart(t *table) (*part, error) {
	if err := os.MkdirAll(t.dir, 0o777); err != nil {
		return nil, err
	}
	w.seq[t.dir]++
	final := filepath.Join(t.dir, fmt.Sprintf("part-%s-%d.parquet", w.run, w.seq[t.dir]))
	tmp := final + ".inprogress"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, err
	}
	opts := append(slices.Clip(w.props), t.plan.file)
	// NewWriter panics on a bad configuration: checked first. The
	// options, not this config, go to NewWriter, which merges a config
	// into its defaults and so cannot turn an option off.
	if _, err := parquet.NewWriterConfig(opts...); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	return &part{f: f, fw: parquet.NewWriter(f, opts...), tmp: tmp, final: final, specs: t.plan.specs, cur: newBatch(t.plan.specs)}, nil
}

// wait waits for the row group a worker is writing, if any, and returns
// its error.
func (p *part) wait() error {
	if p.busy != nil {
		<-p.busy
		p.busy = nil
	}
	return p.err
}

// flush hands the filled row group to a worker (or, without workers,
// writes it), and goes on with the other batch. A part has at most one
// row group with a worker, so that its row groups are written in order.
func (w *Writer) flush(p *part) error {
	if err := p.wait(); err != nil {
		return err
	}
	b := p.cur
	if b.rows == 0 {
		return nil
	}
	p.cur, p.spare = p.spare, nil
	if p.cur == nil {
		p.cur = newBatchLike(b)
	}
	if w.pool == nil {
		p.err = b.write(p.fw, &w.scratch)
		b.reset()
		p.spare = b
		return p.err
	}
	p.busy = make(chan struct{})
	w.pool.submit(p, b)
	return nil
}

// close completes the part: its last row group, the footer, the rename.
func (w *Writer) close(p *part) error {
	err := w.flush(p)
	if werr := p.wait(); err == nil {
		err = werr
	}
	if err == nil {
		err = p.fw.Close() // the footer
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p.tmp, p.final)
	}
	if err != nil {
		// A part that cannot be completed (a full disk) is removed: no
		// .inprogress is left behind, and the error says what it held.
		os.Remove(p.tmp)
		return fmt.Errorf("parquet %s: %w (removed: its %d rows are not in the lake)", p.final, err, p.rows)
	}
	return nil
}

// hiveNull is Hive's directory value for a null (here: empty) partition key.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"
