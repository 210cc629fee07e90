package duckdb

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestQueryTypesAndValues: column names and DuckDB type names come back as
// DuckDB gives them, values in the documented JSON forms.
func TestQueryTypesAndValues(t *testing.T) {
	cols, rows := Query(t, `SELECT 1::BIGINT AS a, 2.5::DOUBLE AS b, signbit(-0.0::DOUBLE) AS neg,
		'x''y' AS s, [1.5, -2.0]::DOUBLE[] AS l, '0x9832363d2655ce94'::UBIGINT AS u, 'nan'::DOUBLE AS n`)
	want := []Column{{"a", "BIGINT"}, {"b", "DOUBLE"}, {"neg", "BOOLEAN"}, {"s", "VARCHAR"}, {"l", "DOUBLE[]"}, {"u", "UBIGINT"}, {"n", "DOUBLE"}}
	if len(cols) != len(want) {
		t.Fatalf("columns %v, want %v", cols, want)
	}
	for i := range want {
		if cols[i] != want[i] {
			t.Errorf("column %d: %v, want %v", i, cols[i], want[i])
		}
	}
	if len(rows) != 1 || len(rows[0]) != len(want) {
		t.Fatalf("rows %v", rows)
	}
	r := rows[0]
	if r[0] != "1" || r[1] != json.Number("2.5") || r[2] != true || r[3] != "x'y" || r[5] != "10966887678864641684" || r[6] != "NaN" {
		t.Errorf("row %#v", r)
	}
	if l, ok := r[4].([]any); !ok || len(l) != 2 || l[0] != json.Number("1.5") || l[1] != json.Number("-2") {
		t.Errorf("list %#v", r[4])
	}
}

// TestQueryReadsAFile: the way tests use it, reading a file they wrote.
func TestQueryReadsAFile(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	p := filepath.Join(t.TempDir(), "it's.jsonl")
	if err := os.WriteFile(p, []byte("{\"v\":1.0}\n{\"v\":0.5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cols, rows := Query(t, "SELECT v FROM read_json_auto("+Quote(p)+") ORDER BY v")
	if len(cols) != 1 || cols[0].Type != "DOUBLE" || len(rows) != 2 || rows[0][0] != json.Number("0.5") || rows[1][0] != json.Number("1") {
		t.Errorf("columns %v, rows %v", cols, rows)
	}
}
