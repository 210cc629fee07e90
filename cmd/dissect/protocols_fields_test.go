package main

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
)

// TestProtocolsFields checks `dissect protocols --fields`: every declared
// field of every protocol is listed by its filter name with its type, the
// record keys come first, and no line is wider than COLUMNS.
func TestProtocolsFields(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	out, errOut, code := cli(t, "protocols", "--fields")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for i, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("line %d has %d columns: %q", i+1, n, line)
		}
	}
	first, _, _ := strings.Cut(out, "\n\n")
	for _, k := range []string{"proto", "type", "stream", "transport", "src", "dst", "time", "offset", "length"} {
		if !strings.Contains(first, k) {
			t.Errorf("record key %q is not in the first paragraph:\n%s", k, first)
		}
	}
	protos, err := all.Protocols(all.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	for _, p := range protos {
		in := p.Info()
		fields := dissect.FieldInfos(in.Types)
		if len(fields) == 0 {
			t.Errorf("%s declares no fields", in.Name)
		}
		if !strings.Contains(out, "\n"+in.Name) {
			t.Errorf("no section for %s", in.Name)
		}
		for _, f := range fields {
			name := in.Proto + "." + f.Name
			found := false
			for i, l := range lines {
				fs := strings.Fields(l)
				// the name and its type on one line, or a long name
				// alone and the type first on the next
				if len(fs) > 1 && fs[0] == name && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), name)), f.Type) ||
					len(fs) == 1 && fs[0] == name && i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), f.Type) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s (%s) is not listed with its type", name, f.Type)
			}
		}
	}
}

// TestProtocolsFieldsOne checks that naming a protocol lists only its
// fields (a proto key shared by two decode-as names lists both), and that
// an unknown name or a stray argument is a usage error.
func TestProtocolsFieldsOne(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	out, errOut, code := cli(t, "protocols", "--fields", "deltarobot")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"deltarobot.x ", "deltarobot.points[]", "deltarobot.rtt_ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	for _, not := range []string{"vrpn.", "handcontrol.", "roboid.", "neptune."} {
		if strings.Contains(out, not) {
			t.Errorf("%q listed for deltarobot only:\n%s", not, out)
		}
	}
	out, _, code = cli(t, "protocols", "--fields", "neptune")
	if code != 0 || !strings.Contains(out, "neptune.motor ") || !strings.Contains(out, "neptune.motor_id ") || !strings.Contains(out, "neptune-wiki") {
		t.Errorf("--fields neptune: exit %d, want both neptune and neptune-wiki:\n%s", code, out)
	}
	for _, args := range [][]string{
		{"protocols", "--fields", "nosuch"},
		{"protocols", "--fields", "vrpn", "roboid"},
		{"protocols", "deltarobot"},
	} {
		out, errOut, code := cli(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage); stdout %q", args, code, out)
		}
		if errOut == "" {
			t.Errorf("%v: nothing on stderr", args)
		}
	}
}

// TestProtocolsFieldsNarrow checks that the listing still fits a narrow
// terminal.
func TestProtocolsFieldsNarrow(t *testing.T) {
	for _, cols := range []int{40, 20} {
		t.Setenv("COLUMNS", strconv.Itoa(cols))
		out, errOut, code := cli(t, "protocols", "--fields")
		if code != 0 {
			t.Fatalf("COLUMNS=%d: exit %d: %s", cols, code, errOut)
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > cols {
				t.Errorf("COLUMNS=%d: line %d has %d columns: %q", cols, i+1, n, line)
			}
		}
	}
}
