package dissecttest

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// CheckDeclared fails t for every record of recs that matches no
// declaration of reg, or departs from the one it matches
// ([dissect.TypeDecl.Check]), naming the record; it reports at most 10.
// It returns the number of records checked per declaration table, so a
// test can also say which declared types its inputs never produced.
func CheckDeclared(t testing.TB, reg *dissect.Registry, recs []*dissect.Record) map[string]int {
	t.Helper()
	seen := map[string]int{}
	bad := 0
	for i, r := range recs {
		d := reg.Decl(r)
		var err error
		if d == nil {
			err = errUndeclared
		} else {
			err = d.Check(r)
			seen[r.Proto+" "+d.Table()]++
		}
		if err != nil {
			if bad++; bad <= 10 {
				t.Errorf("record %d (%s %s): %v: %s", i, r.Proto, r.Type, err, DescribeRecord(r))
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d records in all depart from their declarations", bad)
	}
	return seen
}

type declError string

func (e declError) Error() string { return string(e) }

const errUndeclared = declError("no declaration matches this record")
