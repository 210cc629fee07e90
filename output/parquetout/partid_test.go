package parquetout_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output/parquetout"
)

// partNames returns the files under dir, relative to it.
func partNames(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// writeLake writes n records of types a and b (PartRows 2, so a has
// several parts) with the given part id.
func writeLake(t *testing.T, dir, id string, n int) {
	t.Helper()
	w, err := parquetout.New(dir, parquetout.Options{PartID: id, PartRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		typ := "a"
		if i%3 == 2 {
			typ = "b"
		}
		if err := w.Record(&dissect.Record{Proto: "p", Type: typ, Offset: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPartID checks that Options.PartID names the parts
// part-<id>-<seq>.parquet and that a second run with the same id and
// records writes the same names (replacing the files, not adding).
func TestPartID(t *testing.T) {
	dir := t.TempDir()
	writeLake(t, dir, "cap_0123-x", 6) // a: 4 records (2 parts), b: 2 (1 part)
	want := []string{
		"proto=p/type=a/part-cap_0123-x-1.parquet",
		"proto=p/type=a/part-cap_0123-x-2.parquet",
		"proto=p/type=b/part-cap_0123-x-1.parquet",
	}
	got := partNames(t, dir)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("parts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	writeLake(t, dir, "cap_0123-x", 6)
	if got := partNames(t, dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after a rerun:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Without an id, a run adds its own names.
	writeLake(t, dir, "", 6)
	if got := partNames(t, dir); len(got) != 6 {
		t.Fatalf("a run without id: %d files, want 6: %v", len(got), got)
	}
}

func TestPartIDRejected(t *testing.T) {
	for _, id := range []string{"../x", "a/b", "a.b", "a b", "é", "a\x00", strings.Repeat("a", parquetout.MaxPartIDLen+1)} {
		if err := parquetout.ValidPartID(id); err == nil {
			t.Errorf("ValidPartID(%q) = nil", id)
		}
		dir := t.TempDir()
		if _, err := parquetout.New(filepath.Join(dir, "lake"), parquetout.Options{PartID: id}); err == nil {
			t.Errorf("New with PartID %q: no error", id)
		}
		if _, err := os.Stat(filepath.Join(dir, "lake")); err == nil {
			t.Errorf("New with PartID %q made the lake", id)
		}
	}
	for _, id := range []string{"a", "0123abcdef", "A-b_C", strings.Repeat("f", parquetout.MaxPartIDLen)} {
		if err := parquetout.ValidPartID(id); err != nil {
			t.Errorf("ValidPartID(%q): %v", id, err)
		}
	}
}
