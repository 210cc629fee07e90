package filter

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/dissect-tools/dissect/capture"
)

// checkProgram asserts what every compiled program must satisfy: at most
// MaxInstructions, it assembles, every jump lands inside the program (all
// classic BPF jumps go forward, so it terminates), it ends with a return,
// every return gives 0 or snaplen, and scratch memory is written before it
// is read on every path (the Linux checker's rule).
func checkProgram(t *testing.T, expr string, prog []bpf.Instruction, snaplen uint32) {
	t.Helper()
	if len(prog) == 0 || len(prog) > MaxInstructions {
		t.Fatalf("%q: program of %d instructions", expr, len(prog))
	}
	if _, err := bpf.Assemble(prog); err != nil {
		t.Fatalf("%q: does not assemble: %v", expr, err)
	}
	if _, ok := prog[len(prog)-1].(bpf.RetConstant); !ok {
		t.Fatalf("%q: last instruction %v is not a return", expr, prog[len(prog)-1])
	}
	// written[i]: M[0] is written on every path reaching i.
	written := make([]bool, len(prog))
	reached := make([]bool, len(prog))
	reached[0] = true
	flow := func(from, to int, w bool) {
		if to >= len(prog) {
			t.Fatalf("%q: instruction %d jumps to %d, past the end", expr, from, to)
		}
		if !reached[to] {
			reached[to], written[to] = true, w
		} else {
			written[to] = written[to] && w
		}
	}
	for i, ins := range prog {
		if !reached[i] {
			continue
		}
		w := written[i]
		switch ins := ins.(type) {
		case bpf.StoreScratch:
			w = true
		case bpf.LoadScratch:
			if !w {
				t.Fatalf("%q: instruction %d reads M[%d] before any write", expr, i, ins.N)
			}
		case bpf.RetConstant:
			if ins.Val != 0 && ins.Val != snaplen {
				t.Fatalf("%q: returns %d", expr, ins.Val)
			}
			continue
		case bpf.RetA:
			t.Fatalf("%q: returns A", expr)
		case bpf.Jump:
			flow(i, i+1+int(ins.Skip), w)
			continue
		case bpf.JumpIf:
			flow(i, i+1+int(ins.SkipTrue), w)
			flow(i, i+1+int(ins.SkipFalse), w)
			continue
		case bpf.JumpIfX:
			t.Fatalf("%q: unexpected %v", expr, ins)
		}
		flow(i, i+1, w)
	}
}

func FuzzCompile(f *testing.F) {
	for _, e := range compareExprs {
		f.Add(e)
	}
	for _, e := range compareErrors {
		f.Add(e)
	}
	for _, tc := range verdictTable {
		f.Add(tc.expr)
	}
	f.Add("host 10.0.0.1 and (port 53 or 3883) and not vlan 5")
	f.Add("((port 1 or (2)) and !(3))")
	pkts := ethernetCorpus()
	links := []capture.LinkType{capture.LinkEthernet, capture.LinkRaw, capture.LinkLinuxSLL}
	f.Fuzz(func(t *testing.T, expr string) {
		for _, lt := range links {
			for _, socket := range []bool{false, true} {
				prog, err := compile(expr, lt, 4242, socket)
				if err != nil {
					var fe *Error
					if !errors.As(err, &fe) {
						t.Fatalf("%q: error of type %T", expr, err)
					}
					if fe.Pos < 0 || fe.Pos > len(expr)+1 {
						t.Fatalf("%q: error position %d outside the expression", expr, fe.Pos)
					}
					if msg := err.Error(); strings.ContainsAny(fe.Msg, "\n\r") || !strings.HasPrefix(msg, "filter ") {
						t.Fatalf("%q: malformed error %q", expr, msg)
					}
					continue
				}
				checkProgram(t, expr, prog, 4242)
				again, _ := compile(expr, lt, 4242, socket)
				if !slices.Equal(prog, again) {
					t.Fatalf("%q: two compilations differ", expr)
				}
				raw, _ := bpf.Assemble(prog)
				vm, err := bpf.NewVM(withVLANMeta(raw, true, 100))
				if err != nil {
					t.Fatalf("%q: VM refuses the program: %v", expr, err)
				}
				for _, s := range pkts[:8] {
					if n, err := vm.Run(s.frame.Data); err != nil || (n != 0 && n != 4242) {
						t.Fatalf("%q: run gives %d, %v", expr, n, err)
					}
				}
			}
		}
	})
}

func BenchmarkCompile(b *testing.B) {
	expr := "tcp port 3883 or (vlan 100 and udp dst portrange 5000-5010) or host 2001:db8::1 and not arp"
	b.SetBytes(int64(len(expr)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(expr, capture.LinkEthernet, 262144); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRun measures a compiled filter in the x/net VM (the kernel runs
// it natively; this is for comparing program shapes).
func BenchmarkRun(b *testing.B) {
	prog, err := Compile("tcp port 3883 or udp port 53", capture.LinkEthernet, 262144)
	if err != nil {
		b.Fatal(err)
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		b.Fatal(err)
	}
	data := unitPackets()["t4"].Data
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if n, _ := vm.Run(data); n == 0 {
			b.Fatal("rejected")
		}
	}
}
