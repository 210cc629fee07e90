package stats

import (
	"strings"
	"testing"
)

// TestAppendFixed checks times rounded to the microsecond: the two
// values, whole values, a negative value that rounds to zero, and the
// table's forms. Expected strings are written by hand.
func TestAppendFixed(t *testing.T) {
	for _, c := range []struct {
		v    float64
		prec int
		trim bool
		want string
	}{
		{1.4015999999999997, 3, true, "1.402"},
		{3.5032579999999998, 6, true, "3.503258"},
		{0.1 + 0.2, 6, true, "0.3"},
		{2, 3, true, "2.0"},
		{0, 6, true, "0.0"},
		{-0.0000001, 6, true, "0.0"},
		{-1.25, 3, true, "-1.25"},
		{160.97100000000003, 3, true, "160.971"},
		{1e21, 3, true, "1000000000000000000000.0"},
		{1.4015999999999997, 3, false, "1.402"},
		{2, 3, false, "2.000"},
		{-0.0001, 3, false, "0.000"},
	} {
		if got := string(appendFixed(nil, c.v, c.prec, c.trim)); got != c.want {
			t.Errorf("appendFixed(%v, %d, %v) = %s, want %s", c.v, c.prec, c.trim, got, c.want)
		}
	}
	if got := ms(0.0012345); got != "0.001" {
		t.Errorf("ms(0.0012345) = %s, want 0.001", got)
	}
}

// TestFitWholeColumn checks that a column marked whole is not cut while a
// column can be dropped, that a secondary column goes first, and that a
// column dropped by rank comes back when the later drops left room.
func TestFitWholeColumn(t *testing.T) {
	tab := &table{Cols: []column{
		{Name: "ID", Right: true}, {Name: "ENDS", Whole: true}, {Name: "PROTO", Drop: 11},
		{Name: "N", Right: true}, {Name: "WIDE COLUMN", Right: true, Drop: 4}, {Name: "EIGHT CH", Right: true, Drop: 5},
	}}
	tab.Add("0", "10.0.0.1:5000 → 10.0.0.2:6000", "proto", "7", "1", "2")
	var b strings.Builder
	if err := write(tab, &b, TableOptions{Width: 46}); err != nil {
		t.Fatal(err)
	}
	// By rank PROTO, EIGHT CH, then WIDE COLUMN go: ID(2) ENDS(29) N(1)
	// and 2 separators are 36 columns; EIGHT CH (8 and a separator) fits
	// again in 46 and comes back; PROTO would not fit beside it.
	want := "ID  ENDS                           N  EIGHT CH\n 0  10.0.0.1:5000 → 10.0.0.2:6000  7         2\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	write(tab, &b, TableOptions{Width: 20})
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if width(l) > 20 {
			t.Errorf("line %q wider than 20", l)
		}
	}
}

// TestNotesOfDroppedColumns: a note's clause that explains a column the
// fitting dropped is left out; the others stay, and all stay when the
// column is shown.
func TestNotesOfDroppedColumns(t *testing.T) {
	tab := &table{Cols: []column{{Name: "ID", Right: true}, {Name: "MSGS", Right: true}, {Name: "WARNED", Right: true, Drop: 12}, {Name: "JITTER ms", Right: true, Drop: 13}}}
	tab.Add("0", "7", "1", "0.5")
	tab.Notes = []string{"MSGS: decoded messages; WARNED: records with warnings", "jitter = the gaps' deviation"}
	var b strings.Builder
	write(tab, &b, TableOptions{})
	if want := "ID  MSGS  WARNED  JITTER ms\n 0     7       1        0.5\nMSGS: decoded messages; WARNED: records with warnings\njitter = the gaps' deviation\n"; b.String() != want {
		t.Errorf("wide: got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	write(tab, &b, TableOptions{Width: 12})
	if want := "ID  MSGS\n 0     7\nMSGS:\ndecoded\nmessages\n"; b.String() != want {
		t.Errorf("12 columns: got\n%q\nwant\n%q", b.String(), want)
	}
}
