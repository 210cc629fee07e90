package filter

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// The parser builds a boolean tree whose leaves compare one loaded packet
// field with constants. generate turns the tree into short-circuit code:
// every node is compiled with the labels to jump to when it is true and
// when it is false. Code is emitted backwards, from the final return
// instructions to the entry point, so every jump target already has a
// position when its jump is emitted and all jumps go forward.

// node is a boolean expression over a packet.
type node interface{ isNode() }

type (
	andNode   struct{ a, b node }
	orNode    struct{ a, b node }
	notNode   struct{ x node }
	constNode bool
	// cmpNode loads a field and compares it (masked when hasMask) with
	// vals: equal to any of them (opEq), > vals[0] (opGt), >= vals[0]
	// (opGe), any bit of vals[0] set (opSet), or within vals[0]..vals[1]
	// inclusive (opRange).
	cmpNode struct {
		ld      load
		hasMask bool
		mask    uint32
		op      cmpOp
		vals    []uint32
	}
	// effectNode runs instructions that only change registers and
	// scratch memory, then is true.
	effectNode struct{ ins []bpf.Instruction }
)

func (andNode) isNode()    {}
func (orNode) isNode()     {}
func (notNode) isNode()    {}
func (constNode) isNode()  {}
func (cmpNode) isNode()    {}
func (effectNode) isNode() {}

type cmpOp uint8

const (
	opEq cmpOp = iota
	opGt
	opGe
	opSet
	opRange
)

// offset is a packet offset: k, plus the value of scratch memory M[0] when
// variable (after a VLAN test in a socket program).
type offset struct {
	k        uint32
	variable bool
}

func (o offset) add(n uint32) offset { return offset{k: o.k + n, variable: o.variable} }

type loadKind uint8

const (
	ldAbs        loadKind = iota // size bytes at off
	ldTransport4                 // size bytes at k past the IPv4 header at off (its IHL read from the packet)
	ldExt                        // a Linux ancillary value
)

// load describes how a field is brought into the accumulator.
type load struct {
	kind loadKind
	size int // 1, 2 or 4
	off  offset
	k    uint32
	ext  bpf.Extension
}

// scratchOffset is the scratch memory slot holding the variable part of
// offsets in socket programs.
const scratchOffset = 0

// and2, or2 and not1 build tree nodes; and2/or2 with a nil operand return
// the other one.
func and2(a, b node) node {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return andNode{a, b}
}

func or2(a, b node) node {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return orNode{a, b}
}

func not1(x node) node { return notNode{x} }

// fold replaces subtrees whose value does not depend on the packet by
// constants (primitives that cannot match on the link type, such as arp on
// raw IP, are constants). Only subtrees that are skipped at run time
// anyway are dropped.
func fold(n node) node {
	switch n := n.(type) {
	case andNode:
		a := fold(n.a)
		if c, ok := a.(constNode); ok {
			if !c {
				return constNode(false)
			}
			return fold(n.b)
		}
		b := fold(n.b)
		if c, ok := b.(constNode); ok && bool(c) {
			return a
		}
		return andNode{a, b}
	case orNode:
		a := fold(n.a)
		if c, ok := a.(constNode); ok {
			if c {
				return constNode(true)
			}
			return fold(n.b)
		}
		b := fold(n.b)
		if c, ok := b.(constNode); ok && !bool(c) {
			return a
		}
		return orNode{a, b}
	case notNode:
		x := fold(n.x)
		if c, ok := x.(constNode); ok {
			return !c
		}
		return notNode{x}
	}
	return n
}

// emitter collects instructions in reverse order; a label is the index of
// an instruction in that reversed slice.
type emitter struct {
	rev []bpf.Instruction
	err error
}

type label int

func (e *emitter) add(ins bpf.Instruction) label {
	if e.err == nil && len(e.rev) >= MaxInstructions {
		e.err = fmt.Errorf("the program needs more than %d instructions, the classic BPF limit", MaxInstructions)
	}
	e.rev = append(e.rev, ins)
	return label(len(e.rev) - 1)
}

// skip is the jump offset from the next instruction to be emitted to to.
func (e *emitter) skip(to label) uint32 { return uint32(len(e.rev) - 1 - int(to)) }

// jumpIf emits a conditional jump, going through unconditional jumps when a
// target is beyond the 8-bit reach of a conditional jump.
func (e *emitter) jumpIf(cond bpf.JumpTest, val uint32, t, f label) label {
	if e.skip(t) > 255 {
		t = e.add(bpf.Jump{Skip: e.skip(t)})
	}
	if e.skip(f) > 255 {
		f = e.add(bpf.Jump{Skip: e.skip(f)})
	}
	return e.add(bpf.JumpIf{Cond: cond, Val: val, SkipTrue: uint8(e.skip(t)), SkipFalse: uint8(e.skip(f))})
}

// gen emits n so that control reaches t when it is true and f when it is
// false, and returns its entry label.
func (e *emitter) gen(n node, t, f label) label {
	if e.err != nil {
		return t
	}
	switch n := n.(type) {
	case andNode:
		b := e.gen(n.b, t, f)
		return e.gen(n.a, b, f)
	case orNode:
		b := e.gen(n.b, t, f)
		return e.gen(n.a, t, b)
	case notNode:
		return e.gen(n.x, f, t)
	case constNode:
		if n {
			return t
		}
		return f
	case effectNode:
		if e.skip(t) != 0 {
			e.add(bpf.Jump{Skip: e.skip(t)})
		}
		var l label
		for i := len(n.ins) - 1; i >= 0; i-- {
			l = e.add(n.ins[i])
		}
		return l
	case cmpNode:
		switch n.op {
		case opEq:
			for i := len(n.vals) - 1; i >= 0; i-- {
				f = e.jumpIf(bpf.JumpEqual, n.vals[i], t, f)
			}
		case opGt:
			e.jumpIf(bpf.JumpGreaterThan, n.vals[0], t, f)
		case opGe:
			e.jumpIf(bpf.JumpGreaterOrEqual, n.vals[0], t, f)
		case opSet:
			e.jumpIf(bpf.JumpBitsSet, n.vals[0], t, f)
		case opRange:
			hi := e.jumpIf(bpf.JumpGreaterThan, n.vals[1], f, t)
			e.jumpIf(bpf.JumpGreaterOrEqual, n.vals[0], hi, f)
		}
		if n.hasMask {
			e.add(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: n.mask})
		}
		return e.load(n.ld)
	}
	panic(fmt.Sprintf("filter: unknown node %T", n))
}

// load emits the instructions that bring ld into the accumulator (in
// reverse order) and returns the label of the first.
func (e *emitter) load(ld load) label {
	switch ld.kind {
	case ldExt:
		return e.add(bpf.LoadExtension{Num: ld.ext})
	case ldTransport4:
		if !ld.off.variable {
			// X = 4*(IHL); A = packet[X + off + k]
			e.add(bpf.LoadIndirect{Off: ld.off.k + ld.k, Size: ld.size})
			return e.add(bpf.LoadMemShift{Off: ld.off.k})
		}
		// X = M[0]; A = 4*(packet[X+off] & 15) + X; X = A; A = packet[X + off + k]
		e.add(bpf.LoadIndirect{Off: ld.off.k + ld.k, Size: ld.size})
		e.add(bpf.TAX{})
		e.add(bpf.ALUOpX{Op: bpf.ALUOpAdd})
		e.add(bpf.ALUOpConstant{Op: bpf.ALUOpShiftLeft, Val: 2})
		e.add(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf})
		e.add(bpf.LoadIndirect{Off: ld.off.k, Size: 1})
		return e.add(bpf.LoadScratch{Dst: bpf.RegX, N: scratchOffset})
	default:
		if !ld.off.variable {
			return e.add(bpf.LoadAbsolute{Off: ld.off.k, Size: ld.size})
		}
		e.add(bpf.LoadIndirect{Off: ld.off.k, Size: ld.size})
		return e.add(bpf.LoadScratch{Dst: bpf.RegX, N: scratchOffset})
	}
}

// generate compiles a folded, non-constant tree into a program that
// returns snaplen or 0. With scratch, the program starts by zeroing the
// variable offset M[0].
func generate(root node, snaplen uint32, scratch bool) ([]bpf.Instruction, error) {
	e := &emitter{}
	f := e.add(bpf.RetConstant{Val: 0})
	t := e.add(bpf.RetConstant{Val: snaplen})
	entry := e.gen(root, t, f)
	if scratch {
		if e.skip(entry) != 0 {
			e.add(bpf.Jump{Skip: e.skip(entry)})
		}
		e.add(bpf.StoreScratch{Src: bpf.RegA, N: scratchOffset})
		e.add(bpf.LoadConstant{Dst: bpf.RegA, Val: 0})
	} else if e.skip(entry) != 0 {
		e.add(bpf.Jump{Skip: e.skip(entry)})
	}
	if e.err != nil {
		return nil, e.err
	}
	prog := make([]bpf.Instruction, len(e.rev))
	for i, ins := range e.rev {
		prog[len(prog)-1-i] = ins
	}
	return prog, nil
}
