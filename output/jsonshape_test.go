package output

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// TestShapeCache writes records whose types and keys change from record to
// record (same keys under another type, fewer keys, the same text at
// another address, more fields than a shape holds, none at all, and types
// that share a slot) and checks each line's type and fields as written by
// hand.
func TestShapeCache(t *testing.T) {
	type rec struct {
		typ  string
		keys []string
		want string // from "type" to the end of "fields"
	}
	many := make([]string, maxShape+1)
	var manyWant strings.Builder
	for i := range many {
		many[i] = fmt.Sprintf("f%02d", i)
		if i > 0 {
			manyWant.WriteByte(',')
		}
		fmt.Fprintf(&manyWant, `"f%02d":%d`, i, i)
	}
	runtime := func(s string) string { return strings.Clone(s) } // same text, new address
	var recs []rec
	for round := range 3 {
		recs = append(recs,
			rec{"actuator_position", []string{"x", "y"}, `"type":"actuator_position","fields":{"x":0,"y":1}`},
			rec{"current_direction", []string{"x", "y"}, `"type":"current_direction","fields":{"x":0,"y":1}`},
			rec{"actuator_position", []string{"x"}, `"type":"actuator_position","fields":{"x":0}`},
			rec{"actuator_position", []string{"y", "x"}, `"type":"actuator_position","fields":{"y":0,"x":1}`},
			rec{runtime("actuator_position"), []string{runtime("x"), "y"}, `"type":"actuator_position","fields":{"x":0,"y":1}`},
			rec{"ping", nil, `"type":"ping","fields":{}`},
			rec{"pong", []string{""}, `"type":"pong","fields":{"":0}`},
			rec{"wide", many, `"type":"wide","fields":{` + manyWant.String() + `}`},
			rec{"say \"hi\"", []string{"a\tb"}, `"type":"say \"hi\"","fields":{"a\tb":0}`},
		)
		// More types with the same keys than there are slots: some share one.
		for i := range 4 * len(shapeCache{}.slots) {
			typ := fmt.Sprintf("t%03d", i)
			recs = append(recs, rec{typ, []string{"x", "y"}, fmt.Sprintf(`"type":%q,"fields":{"x":0,"y":1}`, typ)})
		}
		// Types built at run time, with keys that change.
		for i := range 40 {
			typ := fmt.Sprintf("type%d_%d", i%7, round)
			recs = append(recs, rec{typ, []string{"k", fmt.Sprintf("v%d", i%3)},
				fmt.Sprintf(`"type":%q,"fields":{"k":0,"v%d":1}`, typ, i%3)})
		}
	}
	var buf bytes.Buffer
	j := NewJSON(&buf, false)
	for _, rc := range recs {
		r := record()
		r.Type = rc.typ
		for i, k := range rc.keys {
			r.Add(k, dissect.Int(int64(i)))
		}
		if err := j.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Flush()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("%d lines for %d records", len(lines), len(recs))
	}
	for i, line := range lines {
		if !strings.Contains(line, `,`+recs[i].want+`}`) || !strings.HasSuffix(line, recs[i].want+"}") {
			t.Errorf("record %d: got %s\nwant it to end with %s}", i, line, recs[i].want)
		}
	}
}
