package dissecttest

import (
	"errors"
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// This file holds the parser contract of dissect/protocol.go as a wrapper:
// a protocol whose parsers check every result they return.

// Checked returns p with every Detect, Parse and Sync result checked
// against the contract of [dissect.Parser] and [dissect.Protocol]: t fails
// (t.Fatalf) at the first departure or panic, naming the call and its
// input. Fuzz targets wrap the protocol they register with it.
//
// What is checked: Parse returns (n, nil) with 0 < n <= len(b) and a
// record type that is neither empty nor an event type, (need,
// ErrNeedMore) with need 0 or past len(b), or (0, *dissect.Error) naming
// the protocol, with a code and an offset within b; Sync returns an index
// within b, and one before its end when it found a message start; Detect
// returns one of the three verdicts, and never Yes for a protocol whose
// Info.Detection says it has no content detection.
//
// A protocol's own rules for Parse come as checks (also), run after the
// contract's on every call.
func Checked(t testing.TB, p dissect.Protocol, also ...ParseCheck) dissect.Protocol {
	cp := newChecked(p, p.Info(), func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format, args...)
	}, false)
	cp.k.also = also
	return cp
}

// ParseCheck is a protocol's own rule for one Parse call, given the
// call's context, input and results: it returns what is wrong, or "".
type ParseCheck func(c *dissect.Ctx, b []byte, n int, err error) string

// contract is what the wrappers share: how to fail, and whether the
// wrapped parser gets a private copy of each input (the pristine run of
// the harness's input-keeping check).
type contract struct {
	fail      func(format string, args ...any) // reports and stops
	info      dissect.Info
	copyInput bool
	also      []ParseCheck
}

type checkedProto struct {
	dissect.Protocol
	k *contract
}

// newChecked wraps p, whose Info is info: the wrapper answers Info with
// it, so that a protocol whose declarations are costly to build (made
// from schemas) builds them once per test, not once per stream.
func newChecked(p dissect.Protocol, info dissect.Info, fail func(string, ...any), copyInput bool) *checkedProto {
	return &checkedProto{Protocol: p, k: &contract{fail: fail, info: info, copyInput: copyInput}}
}

// Info returns the wrapped protocol's Info, as read when it was wrapped.
func (p *checkedProto) Info() dissect.Info { return p.k.info }

// Detect checks the verdict.
func (p *checkedProto) Detect(s *dissect.StreamInfo, dir dissect.Dir, b []byte) (v dissect.Verdict) {
	defer p.k.recover("Detect", b)
	v = p.Protocol.Detect(s, dir, b)
	switch {
	case v > dissect.Yes:
		p.k.fail("%s: Detect(%s) = verdict %d, not No, Maybe or Yes", p.k.info.Name, Excerpt(b), v)
	case v == dissect.Yes && p.k.info.Detection == "":
		p.k.fail("%s: Detect(%s) = Yes, but Info.Detection is empty (a protocol without content detection)", p.k.info.Name, Excerpt(b))
	}
	return v
}

// NewParser wraps the protocol's parser, keeping its optional End.
func (p *checkedProto) NewParser(s *dissect.StreamInfo) dissect.Parser {
	inner := p.Protocol.NewParser(s)
	cp := checkedParser{p: inner, k: p.k}
	if e, ok := inner.(dissect.Ender); ok {
		return checkedEnder{cp, e}
	}
	return cp
}

type checkedParser struct {
	p dissect.Parser
	k *contract
}

type checkedEnder struct {
	checkedParser
	e dissect.Ender
}

func (p checkedEnder) End(c *dissect.Ctx) {
	defer p.k.recover("End", nil)
	p.e.End(c)
}

// Parse calls the parser and checks what it returns.
func (p checkedParser) Parse(c *dissect.Ctx, b []byte) (n int, err error) {
	defer p.k.recover("Parse", b)
	in := b
	if p.k.copyInput {
		in = append([]byte(nil), b...)
	}
	n, err = p.p.Parse(c, in)
	name := p.k.info.Name
	var e *dissect.Error
	switch {
	case err == nil:
		if n <= 0 || n > len(b) {
			p.k.fail("%s: Parse(%s) = %d, nil: want 0 < n <= %d", name, Excerpt(b), n, len(b))
		}
		if t := c.Rec.Type; t == "" || t == dissect.TypeGap || t == dissect.TypeSkipped {
			p.k.fail("%s: Parse(%s) = %d, nil with record type %q", name, Excerpt(b), n, t)
		}
	case errors.Is(err, dissect.ErrNeedMore):
		if n < 0 || n != 0 && n <= len(b) {
			p.k.fail("%s: Parse(%s) = %d, ErrNeedMore: want 0 or more than the %d bytes given", name, Excerpt(b), n, len(b))
		}
	case errors.As(err, &e):
		if n != 0 || e.Offset < 0 || e.Offset >= int64(len(b)) || e.Proto != p.k.info.Proto || e.Code == "" {
			p.k.fail("%s: Parse(%s) = %d, %#v: want 0 and an error of proto %q with a code and an offset within the %d bytes", name, Excerpt(b), n, e, p.k.info.Proto, len(b))
		}
	default:
		p.k.fail("%s: Parse(%s) = %d, %v: the error is neither ErrNeedMore nor a *dissect.Error", name, Excerpt(b), n, err)
	}
	for _, check := range p.k.also {
		if msg := check(c, b, n, err); msg != "" {
			p.k.fail("%s: Parse(%s) = %d, %v: %s", name, Excerpt(b), n, err, msg)
		}
	}
	return n, err
}

// Sync calls the parser and checks the index it returns.
func (p checkedParser) Sync(c *dissect.Ctx, b []byte) (k int, ok bool) {
	defer p.k.recover("Sync", b)
	in := b
	if p.k.copyInput {
		in = append([]byte(nil), b...)
	}
	k, ok = p.p.Sync(c, in)
	if k < 0 || k > len(b) || ok && k == len(b) {
		p.k.fail("%s: Sync(%s) = %d, %v: want an index within the %d bytes (before the end when found)", p.k.info.Name, Excerpt(b), k, ok, len(b))
	}
	return k, ok
}

// recover turns a panic of the wrapped call into a failure naming the
// call and its input; the harness's own stop (abortRun) goes through.
func (k *contract) recover(call string, b []byte) {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(abortRun); ok {
		panic(r)
	}
	k.fail("%s: %s(%s) panicked: %v\n%s", k.info.Name, call, Excerpt(b), r, debug.Stack())
}

// abortRun is the panic value with which the harness stops a run after a
// failure its contract check reported.
type abortRun struct{}

// Excerpt renders b for failure messages: its length and its bytes in hex,
// the first 96 and the last 32 when it is longer.
func Excerpt(b []byte) string {
	if len(b) <= 128 {
		return fmt.Sprintf("%d bytes %x", len(b), b)
	}
	return fmt.Sprintf("%d bytes %x … %x", len(b), b[:96], b[len(b)-32:])
}
