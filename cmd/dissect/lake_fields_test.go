package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/internal/duckdb"
	"github.com/dissect-tools/dissect/output/parquetout"
)

// envelope are a lake row's columns that are not declared fields.
var envelope = map[string]bool{"time": true, "frame": true, "transport": true, "stream": true, "src": true, "dst": true, "offset": true,
	"length": true, "warnings": true, "extra_json": true, "capture": true, "proto": true, "type": true, "record_type": true, "raw": true}

// TestLakeFieldsMatchJSON writes every shipped capture into a lake and
// checks, record by record, that the row DuckDB reads for each -o json
// record (found by capture, time, frame, proto, type, stream, offset and
// addresses) holds its fields: every key's value at every depth (numbers
// equal, or equal as float32 for FLOAT columns; times and bytes as -o
// json writes them), and null in every declared column the record lacks.
func TestLakeFieldsMatchJSON(t *testing.T) {
	if err := duckdb.Available(); err != nil {
		t.Skip(err)
	}
	lake := t.TempDir()
	want := map[string][]map[string]any{}
	n := 0
	for _, c := range shippedCaptures(t) {
		out, errOut, code := cli(t, append([]string{"-o", "json", "--no-summary", "-r", c.path}, c.args...)...)
		if code != 0 {
			t.Fatalf("%s: json exit %d: %s", c.path, code, errOut)
		}
		for _, r := range parseJSONL(t, out) {
			e := envelopeOf(t, r)
			var fields map[string]any
			dec := json.NewDecoder(bytes.NewReader(r.Fields))
			dec.UseNumber()
			if err := dec.Decode(&fields); err != nil {
				t.Fatal(err)
			}
			k := strings.Join([]string{filepath.Base(c.path), fmt.Sprint(e.time), fmt.Sprint(*r.Frame), e.proto, r.Type, fmt.Sprint(e.stream),
				fmt.Sprint(e.offset), r.Src, r.Dst}, "|")
			want[k] = append(want[k], fields)
			n++
		}
		if _, errOut, code := cli(t, append([]string{"-o", "parquet", "--out", lake, "--no-summary", "-r", c.path}, c.args...)...); code != 0 {
			t.Fatalf("%s: parquet exit %d: %s", c.path, code, errOut)
		}
	}
	if n == 0 {
		t.Fatal("no records")
	}
	// Each partition on its own, as a user reads a type: the lake's types
	// have columns of one name and different types (VRPN's channels).
	dirs, err := filepath.Glob(filepath.Join(lake, "proto=*", "type=*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no partitions: %v", err)
	}
	var sel []string
	for _, d := range dirs {
		sel = append(sel, "SELECT concat_ws('|', capture, epoch_ns(time)::VARCHAR, frame::VARCHAR, coalesce(proto, ''), type, stream::VARCHAR, "+
			"\"offset\"::VARCHAR, src, dst), to_json(t)::VARCHAR FROM read_parquet("+duckdb.Quote(filepath.Join(d, "*.parquet"))+
			", hive_partitioning=true, union_by_name=true) t")
	}
	_, rows := duckdb.Query(t, strings.Join(sel, "\nUNION ALL\n"))
	if len(rows) != n {
		t.Errorf("%d rows in the lake, %d JSON records", len(rows), n)
	}
	bad := 0
	for _, r := range rows {
		k := fmt.Sprint(r[0])
		dec := json.NewDecoder(strings.NewReader(fmt.Sprint(r[1])))
		dec.UseNumber()
		var row map[string]any
		if err := dec.Decode(&row); err != nil {
			t.Fatal(err)
		}
		cands := want[k]
		var diffs []string
		found := -1
		for i, f := range cands {
			if d := rowDiff(f, row, true); d == "" {
				found = i
				break
			} else {
				diffs = append(diffs, d)
			}
		}
		if found < 0 {
			if bad++; bad <= 10 {
				t.Errorf("%s: no JSON record with the row's fields (%d records: %v)", k, len(cands), diffs)
			}
			continue
		}
		want[k] = append(cands[:found], cands[found+1:]...)
	}
}

// rowDiff says how a lake row (top: a struct of it) departs from a
// record's fields (an object of them), "" for not. Top-level fields named
// like the common columns have their column's name.
func rowDiff(fields, row map[string]any, top bool) string {
	seen := map[string]bool{}
	for k, v := range fields {
		col := k
		if top {
			col = parquetout.ColumnName(k)
		}
		seen[col] = true
		if d := valueDiff(v, row[col]); d != "" {
			return col + ": " + d
		}
	}
	for col, v := range row {
		if !(top && envelope[col]) && !seen[col] && v != nil {
			return fmt.Sprintf("%s: %v in the lake, absent in JSON", col, v)
		}
	}
	return ""
}

// valueDiff compares a JSON value with DuckDB's to_json of its column.
func valueDiff(j, l any) string {
	switch j := j.(type) {
	case map[string]any:
		lm, ok := l.(map[string]any)
		if !ok {
			if s, isStr := l.(string); isStr && len(j) == 0 && s == "{}" {
				return "" // an object declared without keys: its JSON
			}
			return fmt.Sprintf("object %v, lake %v", j, l)
		}
		return rowDiff(j, lm, false)
	case []any:
		ll, ok := l.([]any)
		if !ok || len(ll) != len(j) {
			return fmt.Sprintf("array %v, lake %v", j, l)
		}
		for i := range j {
			if d := valueDiff(j[i], ll[i]); d != "" {
				return fmt.Sprintf("[%d] %s", i, d)
			}
		}
		return ""
	case json.Number:
		ln, ok := l.(json.Number)
		if !ok {
			return fmt.Sprintf("number %v, lake %v", j, l)
		}
		if j.String() == ln.String() {
			return ""
		}
		a, err1 := j.Float64()
		b, err2 := ln.Float64()
		if err1 == nil && err2 == nil && (a == b || float32(a) == float32(b) || math.IsNaN(a) && math.IsNaN(b)) {
			return ""
		}
		return fmt.Sprintf("number %v, lake %v", j, l)
	case string:
		ls, ok := l.(string)
		if !ok {
			return fmt.Sprintf("string %q, lake %v", j, l)
		}
		if j == ls {
			return ""
		}
		if jt, err := time.Parse(time.RFC3339Nano, j); err == nil {
			if lt, err := time.Parse("2006-01-02 15:04:05.999999999", ls); err == nil && jt.Equal(lt) {
				return ""
			}
		}
		if b, err := hex.DecodeString(j); err == nil && string(b) == duckBlob(ls) {
			return ""
		}
		return fmt.Sprintf("string %q, lake %q", j, ls)
	case bool:
		if l != j {
			return fmt.Sprintf("%v, lake %v", j, l)
		}
		return ""
	case nil:
		if l != nil {
			return fmt.Sprintf("null, lake %v", l)
		}
		return ""
	}
	return fmt.Sprintf("JSON %T", j)
}

// duckBlob decodes DuckDB's text of a BLOB: printable ASCII as itself,
// other bytes as \xHH.
func duckBlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if v, err := hex.DecodeString(s[i+2 : i+4]); err == nil {
				b.WriteByte(v[0])
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
