package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/internal/duckdb"
	"github.com/dissect-tools/dissect/output/parquetout"
	"github.com/dissect-tools/dissect/pipeline"
)

// lakeCounts returns "capture|proto|type" -> rows, from DuckDB.
func lakeCounts(t *testing.T, lake string) map[string]int {
	t.Helper()
	glob := duckdb.Quote(filepath.Join(lake, "**", "*.parquet"))
	_, rows := duckdb.Query(t, "SELECT capture, coalesce(proto, ''), type, count(*)::VARCHAR FROM read_parquet("+glob+
		", hive_partitioning=true) GROUP BY ALL")
	return counted(rows)
}

// counted returns the rows of a GROUP BY query whose last column is a
// count as "a|b|..." (the other columns) -> count.
func counted(rows [][]any) map[string]int {
	got := map[string]int{}
	for _, r := range rows {
		var n int
		fmt.Sscan(fmt.Sprint(r[len(r)-1]), &n)
		var key []string
		for _, v := range r[:len(r)-1] {
			key = append(key, fmt.Sprint(v))
		}
		got[strings.Join(key, "|")] = n
	}
	return got
}

// TestParquetLakeMatchesJSON writes every shipped capture (pcaps/ and the
// real VRPN captures) into one lake, and the HandControl captures again
// with --handcontrol-raw (other declarations) into another, and checks
// with DuckDB that every record has its typed columns (no row has an
// extra_json), that the rows are the records of -o json, and the types
// of some columns.
func TestParquetLakeMatchesJSON(t *testing.T) {
	if err := duckdb.Available(); err != nil {
		t.Skip(err.Error())
	}
	caps := shippedCaptures(t)
	var raw []shippedCapture
	for _, c := range caps {
		if strings.Contains(filepath.Base(c.path), "handcontrol") {
			raw = append(raw, shippedCapture{c.path, append([]string{"--handcontrol-raw"}, c.args...)})
		}
	}
	if len(raw) == 0 {
		t.Fatal("no HandControl capture")
	}
	lake := t.TempDir()
	checkLakeMatchesJSON(t, lake, caps)
	checkLakeMatchesJSON(t, t.TempDir(), raw)

	// Column types, as DuckDB sees them.
	dir := filepath.Join(lake, "proto=deltarobot", "type=actuator_position", "*.parquet")
	types := map[string]string{}
	_, rows := duckdb.Query(t, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet("+duckdb.Quote(dir)+", hive_partitioning=true, union_by_name=true))")
	for _, r := range rows {
		types[fmt.Sprint(r[0])] = fmt.Sprint(r[1])
	}
	for col, typ := range map[string]string{
		"x": "FLOAT", "y": "FLOAT", "time": "TIMESTAMP_NS", "capture": "VARCHAR", "stream": "BIGINT",
		"offset": "BIGINT", "warnings": "VARCHAR[]", "proto": "VARCHAR", "type": "VARCHAR", "extra_json": "VARCHAR",
	} {
		if types[col] != typ {
			t.Errorf("deltarobot actuator_position column %s: %q, want %s (all: %v)", col, types[col], typ, types)
		}
	}
	// Nested fields are structs and lists.
	pq := filepath.Join(lake, "proto=vrpn", "type=vrpn_Tracker Pos_Quat", "*.parquet")
	_, rows = duckdb.Query(t, "SELECT typeof(pos), typeof(quat) FROM read_parquet("+
		duckdb.Quote(pq)+", hive_partitioning=true, union_by_name=true) GROUP BY ALL")
	if len(rows) != 1 || rows[0][0] != "DOUBLE[]" || !strings.HasPrefix(fmt.Sprint(rows[0][1]), "STRUCT(") {
		t.Errorf("vrpn pos, quat: %v", rows)
	}
}

// jsonEnvelope is a JSON record's envelope as the lake has it: the time
// in nanoseconds, absent keys as zero values.
type jsonEnvelope struct {
	time           int64
	proto          string
	stream         int
	offset, length int64
}

func envelopeOf(t *testing.T, r jsonRecord) jsonEnvelope {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, r.Time)
	if err != nil {
		t.Fatal(err)
	}
	e := jsonEnvelope{time: tm.UnixNano()}
	if r.Proto != nil {
		e.proto = *r.Proto
	}
	if r.Stream != nil {
		e.stream = *r.Stream
	}
	if r.Offset != nil {
		e.offset = *r.Offset
	}
	if r.Length != nil {
		e.length = *r.Length
	}
	return e
}

// checkLakeMatchesJSON writes caps into lake and checks it against -o
// json row for row: no extra_json, and the lake's rows, read by DuckDB
// with the partitions' proto and type, are the JSON records (capture,
// time to the nanosecond, proto, type, transport, stream, addresses,
// offset, length, warnings), each as often.
func checkLakeMatchesJSON(t *testing.T, lake string, caps []shippedCapture) {
	t.Helper()
	want := map[string]int{}
	for _, c := range caps {
		out, errOut, code := cli(t, append([]string{"-o", "json", "--no-summary", "-r", c.path}, c.args...)...)
		if code != 0 {
			t.Fatalf("%s: json exit %d: %s", c.path, code, errOut)
		}
		name := filepath.Base(c.path)
		for _, r := range parseJSONL(t, out) {
			e := envelopeOf(t, r)
			want[strings.Join([]string{name, fmt.Sprint(e.time), e.proto, r.Type, r.Transport, fmt.Sprint(e.stream),
				r.Src, r.Dst, fmt.Sprint(e.offset), fmt.Sprint(e.length), fmt.Sprint(r.Warnings)}, "|")]++
		}
		_, errOut, code = cli(t, append([]string{"-o", "parquet", "--out", lake, "--no-summary", "-r", c.path}, c.args...)...)
		if code != 0 {
			t.Fatalf("%s: parquet exit %d: %s", c.path, code, errOut)
		}
	}
	if len(want) == 0 {
		t.Fatal("no records")
	}
	glob := duckdb.Quote(filepath.Join(lake, "**", "*.parquet"))
	_, rows := duckdb.Query(t, "SELECT coalesce(proto, ''), type, count(*)::VARCHAR, min(capture), min(extra_json) FROM read_parquet("+
		glob+", hive_partitioning=true, union_by_name=true) WHERE extra_json IS NOT NULL GROUP BY ALL ORDER BY ALL")
	for _, r := range rows {
		t.Errorf("proto %q type %q: %v rows with extra_json (undeclared or departing from the declaration), e.g. in %v: %v",
			r[0], r[1], r[2], r[3], r[4])
	}
	_, rows = duckdb.Query(t, "SELECT concat_ws('|', capture, epoch_ns(time)::VARCHAR, coalesce(proto, ''), type, transport, stream::VARCHAR, "+
		"src, dst, \"offset\"::VARCHAR, length::VARCHAR, '[' || array_to_string(coalesce(warnings, []), ' ') || ']'), count(*)::VARCHAR FROM read_parquet("+
		glob+", hive_partitioning=true, union_by_name=true) GROUP BY ALL")
	got := counted(rows)
	keys := func(m map[string]int) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	bad := 0
	for _, k := range keys(want) {
		if got[k] != want[k] && bad < 20 {
			bad++
			t.Errorf("%s: %d rows in the lake, %d JSON records", k, got[k], want[k])
		}
	}
	for _, k := range keys(got) {
		if _, ok := want[k]; !ok && bad < 20 {
			bad++
			t.Errorf("%s: %d rows in the lake, no JSON records", k, got[k])
		}
	}
}

// TestParquetRunsIntoOneLake writes the same capture twice and another
// once into one lake: the part files do not collide, the counts add up and
// the capture column tells the captures apart.
func TestParquetRunsIntoOneLake(t *testing.T) {
	if err := duckdb.Available(); err != nil {
		t.Skip(err.Error())
	}
	lake := t.TempDir()
	a := filepath.Join(pcapDir, "vrpn_multi_device.pcap")
	b := filepath.Join(pcapDir, "deltarobot_session.pcap")
	// The second run reads both files, as arguments: each record is named
	// after the file it came from.
	runs := [][]string{{"-r", a}, append([]string{a, b}, truthFlags(dissecttest.ReadCapture(t, b))...)}
	for _, args := range runs {
		if _, errOut, code := cli(t, append([]string{"-o", "parquet", "--out", lake, "--no-summary"}, args...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	count := func(args ...string) int {
		out, errOut, code := cli(t, append([]string{"-o", "json", "--no-summary"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		return len(parseJSONL(t, out))
	}
	na, nb := count("-r", a), count(append([]string{"-r", b}, truthFlags(dissecttest.ReadCapture(t, b))...)...)
	per := map[string]int{}
	for k, n := range lakeCounts(t, lake) {
		per[strings.SplitN(k, "|", 2)[0]] += n
	}
	if per[filepath.Base(a)] != 2*na || per[filepath.Base(b)] != nb || len(per) != 2 {
		t.Errorf("rows per capture %v, want %s: %d, %s: %d", per, filepath.Base(a), 2*na, filepath.Base(b), nb)
	}
}

func TestParquetNeedsOut(t *testing.T) {
	_, errOut, code := cli(t, "-o", "parquet", filepath.Join(pcapDir, "vrpn_multi_device.pcap"))
	if code == 0 || !strings.Contains(errOut, "--out") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestParquetCompressionFlag: --parquet-compression takes the codecs the
// lake offers and refuses others with a usage error that lists them,
// before anything is written; zstd makes a lake that reads back.
func TestParquetCompressionFlag(t *testing.T) {
	capture := filepath.Join(pcapDir, "vrpn_multi_device.pcap")
	lake := filepath.Join(t.TempDir(), "lake")
	_, errOut, code := cli(t, "-o", "parquet", "--out", lake, "--parquet-compression", "lz4", capture)
	if code != exitUsage || !strings.Contains(errOut, "--parquet-compression") || !strings.Contains(errOut, "snappy, zstd, gzip, none") {
		t.Errorf("lz4: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(lake); !os.IsNotExist(err) {
		t.Errorf("lake made for a refused codec: %v", err)
	}
	if _, errOut, code = cli(t, "-o", "parquet", "--out", lake, "--no-summary", "--parquet-compression", "zstd", capture); code != 0 {
		t.Fatalf("zstd: exit %d: %s", code, errOut)
	}
	if rows := lakeRows(t, lake); rows == 0 {
		t.Error("zstd: no rows")
	}
}

// hostileCapture writes the capture `go run ./internal/hostile args...`
// makes into a temporary file and returns its path; it skips the test
// when the go command is missing.
func hostileCapture(t *testing.T, args ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run internal/hostile:", err)
	}
	cmd := exec.Command(goBin, append([]string{"run", "./internal/hostile"}, args...)...)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hostile %v: %v", args, err)
	}
	path := filepath.Join(t.TempDir(), "hostile.pcap")
	if err := os.WriteFile(path, out, 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestParquetWireNamesBounded writes a capture with more VRPN type names
// than the lake has partitions for, and one with names too long for a
// directory: the run ends well, the lake has at most the declared tables,
// DefaultMaxPartitions partitions named by the wire and the overflow,
// every directory name fits, and the rows per real type (the partition's,
// or record_type where the partition does not say it) are the records of
// -o json. Stderr says how many records overflowed. --max-partitions sets
// the bound.
func TestParquetWireNamesBounded(t *testing.T) {
	if err := duckdb.Available(); err != nil {
		t.Skip(err.Error())
	}
	reg, err := all.Registry(all.Options{})
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, d := range reg.Types("vrpn") {
		if d.Type != "*" {
			declared["type="+parquetout.EscapePartition(d.Type)] = true
		}
	}
	max := parquetout.DefaultMaxPartitions
	for _, c := range []struct {
		name           string
		args           []string
		flags          []string
		wire, overflow int // partitions named by the wire, records beyond
	}{
		{"many", []string{"wirenames", fmt.Sprint(max + 76), "8"}, nil, max, 76},
		{"long", []string{"wirenames", "40", "300"}, nil, 40, 0},
		{"flag", []string{"wirenames", "30", "8"}, []string{"--max-partitions", "10"}, 10, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			capture := hostileCapture(t, c.args...)
			out, errOut, code := cli(t, "-o", "json", "--no-summary", "-r", capture)
			if code != 0 {
				t.Fatalf("json exit %d: %s", code, errOut)
			}
			want := map[string]int{}
			for _, r := range parseJSONL(t, out) {
				want["vrpn|"+r.Type]++
			}
			lake := t.TempDir()
			if _, errOut, code = cli(t, append([]string{"-o", "parquet", "--out", lake, "-r", capture}, c.flags...)...); code != 0 {
				t.Fatalf("parquet exit %d: %s", code, errOut)
			}
			dirs, err := os.ReadDir(filepath.Join(lake, "proto=vrpn"))
			if err != nil {
				t.Fatal(err)
			}
			wire, overflow := 0, false
			for _, d := range dirs {
				switch n := d.Name(); {
				case len(n) > 255:
					t.Errorf("directory name of %d bytes", len(n))
				case n == "type=__overflow__":
					overflow = true
				case !declared[n]:
					wire++
				}
			}
			if wire != c.wire || overflow != (c.overflow > 0) {
				t.Errorf("%d partitions named by the wire (want %d), overflow partition %v", wire, c.wire, overflow)
			}
			_, rows := duckdb.Query(t, "SELECT proto, coalesce(record_type, type), count(*)::VARCHAR FROM read_parquet("+
				duckdb.Quote(filepath.Join(lake, "**", "*.parquet"))+", hive_partitioning=true, union_by_name=true) GROUP BY ALL")
			got := counted(rows)
			note := fmt.Sprintf("dissect: -o parquet: %d records of types beyond", c.overflow)
			if strings.Contains(errOut, note) != (c.overflow > 0) {
				t.Errorf("stderr says %q: %v, want %v:\n%s", note, !(c.overflow > 0), c.overflow > 0, errOut)
			}
			if len(got) != len(want) {
				t.Errorf("%d types in the lake, %d in the JSON records", len(got), len(want))
			}
			for k, n := range want {
				if got[k] != n {
					t.Errorf("%.60q: %d rows in the lake, %d JSON records", k, got[k], n)
				}
			}
		})
	}
}

// TestOutputNotes: what stderr is told at the end of a run into a lake
// that overflowed and shortened names, and nothing for one that did not.
func TestOutputNotes(t *testing.T) {
	decl := func(*dissect.Record) *dissect.TypeDecl { return &dissect.TypeDecl{Type: "*"} }
	w, err := parquetout.New(t.TempDir(), parquetout.Options{Decl: decl, MaxPartitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	if notes := outputNotes(w); len(notes) != 0 {
		t.Errorf("notes before any record: %q", notes)
	}
	for _, typ := range []string{"a", strings.Repeat("b", 300), "c", "d", "c"} {
		if err := w.Record(&dissect.Record{Proto: "p", Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// a and the long b make 2; c, d, c overflow; b was shortened.
	// The lake alone, and behind the capture names, a filter and Beside.
	for _, out := range []sink{w, &capturedFrom{sink: &querySink{out: pipeline.NewBeside(w, 0)}}} {
		notes := strings.Join(outputNotes(out), "\n")
		for _, s := range []string{"3 records of types beyond the first 2", "type=__overflow__", "1 partition names too long"} {
			if !strings.Contains(notes, s) {
				t.Errorf("%T: notes do not say %q:\n%s", out, s, notes)
			}
		}
	}
	if notes := outputNotes(&querySink{}); notes != nil {
		t.Errorf("notes of another output: %q", notes)
	}
}

func TestParquetMaxPartitionsFlag(t *testing.T) {
	_, errOut, code := cli(t, "-o", "parquet", "--out", t.TempDir(), "--max-partitions", "0", filepath.Join(pcapDir, "vrpn_multi_device.pcap"))
	if code != 2 || !strings.Contains(errOut, "--max-partitions 0") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// Statistics that number streams (-z follow,tcp,…,N) see every stream
// also when the records go to a lake: the lake's capture names in front
// of them pass the streams opened on. Before, -o parquet found "no tcp
// stream 0".
func TestParquetWithFollow(t *testing.T) {
	f := filepath.Join(pcapDir, "deltarobot_session.pcap")
	want, errs, code := cli(t, f, "-q", "-z", "follow,tcp,ascii,0", "--no-summary")
	if code != 0 || !strings.Contains(want, "Node 0:") {
		t.Fatalf("-q: exit %d, stdout %q: %s", code, want, errs)
	}
	for _, threads := range []string{"1", "3"} {
		got, errs, code := cli(t, f, "-o", "parquet", "--out", t.TempDir(), "-z", "follow,tcp,ascii,0", "--no-summary", "--threads", threads)
		if code != 0 || strings.TrimPrefix(got, "\n") != want {
			t.Errorf("-o parquet --threads %s: exit %d, stdout\n%s\nwant -q's\n%s\nstderr %s", threads, code, got, want, errs)
		}
	}
}
