// Package truth holds the plumbing shared by the test encoders' truth
// records (internal/testenc/*enc): the three-way expectation [Want], the
// output contract's JSON form of a float32, and the common head of a truth
// record's JSON.
package truth

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
)

// Want is a three-way expectation: a test checks Yes and No and ignores Any.
type Want uint8

// Expectations.
const (
	Any Want = iota // not asserted
	Yes             // must hold
	No              // must not hold
)

// String returns "any", "yes" or "no".
func (w Want) String() string {
	switch w {
	case Yes:
		return "yes"
	case No:
		return "no"
	}
	return "any"
}

// F32 writes a float32 as JSON the way the output contract does: the
// shortest digits that read back as the same float32; NaN and infinities
// as the strings "NaN", "Inf" and "-Inf".
func F32(b *bytes.Buffer, f float32) {
	switch x := float64(f); {
	case x != x:
		b.WriteString(`"NaN"`)
	case math.IsInf(x, 1):
		b.WriteString(`"Inf"`)
	case math.IsInf(x, -1):
		b.WriteString(`"-Inf"`)
	default:
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 32))
	}
}

// Head writes the opening of a truth record's JSON object, the keys every
// truth file starts with: {"type":…,"offset":…,"length":…,"fields":fields
// (fields is written as given). The caller adds its own keys and the
// closing brace.
func Head(b *bytes.Buffer, typ string, offset, length int64, fields string) {
	fmt.Fprintf(b, `{"type":%q,"offset":%d,"length":%d,"fields":%s`, typ, offset, length, fields)
}
