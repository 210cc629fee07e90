// Package filter compiles capture filters written in tcpdump's syntax
// (pcap-filter(7)) into classic BPF programs, without libpcap or cgo.
//
// It covers the common subset: host, net, port and portrange with src/dst
// qualifiers, the protocol names ip, ip6, arp, rarp, tcp, udp, sctp, icmp
// and icmp6, "proto N", vlan, and/or/not with parentheses, and tcpdump's
// rule that a bare value after and/or repeats the previous qualifiers
// ("port 80 or 443"). The programs follow libpcap's code generation closely
// enough that they give the same verdict as tcpdump on every packet of the
// package's comparison corpus; docs/capture-filters.md lists what is not supported.
//
// A program returns the snap length to accept a packet and 0 to reject it.
// [Compile] targets packets as they appear in capture files, with VLAN tags
// inside the frame. [CompileSocket] targets a Linux packet socket, where the
// kernel usually moves the outermost VLAN tag out of the frame into packet
// metadata; the two differ only for expressions that use "vlan".
package filter

import (
	"fmt"

	"golang.org/x/net/bpf"

	"github.com/dissect-tools/dissect/capture"
)

// MaxInstructions is the longest program the Linux kernel accepts
// (BPF_MAXINSNS); longer programs are refused with an error.
const MaxInstructions = 4096

// MaxExprLen is the longest expression, in bytes, that is compiled.
const MaxExprLen = 1 << 16

// maxDepth bounds the nesting of parentheses and negations.
const maxDepth = 256

// Error is a filter expression that cannot be compiled. Pos is the 1-based
// byte position in Expr of the token at fault, 0 when the error concerns
// the whole expression.
type Error struct {
	Expr string
	Pos  int
	Msg  string
}

// Error returns the one-line message, e.g. `filter "tcp prot 80": at 5:
// unknown primitive "prot"`; an expression longer than 100 bytes is shown
// cut short.
func (e *Error) Error() string {
	expr := e.Expr
	if len(expr) > 100 {
		expr = expr[:97] + "..."
	}
	if e.Pos > 0 {
		return fmt.Sprintf("filter %q: at %d: %s", expr, e.Pos, e.Msg)
	}
	return fmt.Sprintf("filter %q: %s", expr, e.Msg)
}

// Compile compiles expr for packets of link type lt as they are stored in
// capture files (VLAN tags inside the frame, as tcpdump -r sees them). The
// program returns snaplen for an accepted packet and 0 for a rejected one;
// an empty (or all-blank) expression accepts every packet. Supported link
// types are Ethernet, Linux SLL and SLL2, and raw IP (LinkRaw, LinkIPv4,
// LinkIPv6). Errors are of type *Error.
func Compile(expr string, lt capture.LinkType, snaplen uint32) ([]bpf.Instruction, error) {
	return compile(expr, lt, snaplen, false)
}

// Assemble is [Compile] followed by [bpf.Assemble]: the raw instructions to
// hand to a kernel or to a BPF VM that reads packets from files.
func Assemble(expr string, lt capture.LinkType, snaplen uint32) ([]bpf.RawInstruction, error) {
	return assemble(expr, lt, snaplen, false)
}

// CompileSocket compiles expr for a Linux AF_PACKET socket (SOCK_RAW), the
// program to attach with SO_ATTACH_FILTER. It differs from [Compile] only
// for "vlan": Linux usually strips the outermost VLAN tag from the frame
// and keeps it in packet metadata, so, as libpcap does for live captures,
// the first "vlan" test reads the tag from the kernel's ancillary data
// (SKF_AD_VLAN_TAG_PRESENT, SKF_AD_VLAN_TAG) and falls back to an in-frame
// tag, and the tests after it use an offset held in scratch memory M[0]
// (0 when the tag was stripped, 4 when it is in the frame). Such programs
// use BPF extensions that golang.org/x/net/bpf's VM does not run.
func CompileSocket(expr string, lt capture.LinkType, snaplen uint32) ([]bpf.Instruction, error) {
	return compile(expr, lt, snaplen, true)
}

// AssembleSocket is [CompileSocket] followed by [bpf.Assemble]: the value
// for SO_ATTACH_FILTER.
func AssembleSocket(expr string, lt capture.LinkType, snaplen uint32) ([]bpf.RawInstruction, error) {
	return assemble(expr, lt, snaplen, true)
}

func assemble(expr string, lt capture.LinkType, snaplen uint32, socket bool) ([]bpf.RawInstruction, error) {
	prog, err := compile(expr, lt, snaplen, socket)
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		// The code generator only emits assemblable instructions.
		return nil, &Error{Expr: expr, Msg: "cannot assemble the program: " + err.Error()}
	}
	return raw, nil
}

func compile(expr string, lt capture.LinkType, snaplen uint32, socket bool) ([]bpf.Instruction, error) {
	if snaplen == 0 {
		return nil, &Error{Expr: expr, Msg: "snap length 0 would reject every packet"}
	}
	if len(expr) > MaxExprLen {
		return nil, &Error{Expr: expr, Msg: fmt.Sprintf("expression of %d bytes is longer than the limit of %d", len(expr), MaxExprLen)}
	}
	toks := lex(expr)
	if len(toks) == 1 { // only EOF: accept everything, whatever the link
		return []bpf.Instruction{bpf.RetConstant{Val: snaplen}}, nil
	}
	lk, ok := linkFor(lt)
	if !ok {
		return nil, &Error{Expr: expr, Msg: fmt.Sprintf("link type %d is not supported (Ethernet, Linux SLL/SLL2 and raw IP are)", lt)}
	}
	p := &parser{expr: expr, toks: toks, link: lk, socket: socket, off: lk.base()}
	root, err := p.parse()
	if err != nil {
		return nil, err
	}
	root = fold(root)
	if c, ok := root.(constNode); ok {
		if c {
			return []bpf.Instruction{bpf.RetConstant{Val: snaplen}}, nil
		}
		return nil, &Error{Expr: expr, Msg: fmt.Sprintf("expression rejects every packet of link type %d", lt)}
	}
	prog, err := generate(root, snaplen, p.usesScratch)
	if err != nil {
		return nil, &Error{Expr: expr, Msg: err.Error()}
	}
	return prog, nil
}
