package filter

import (
	"fmt"

	"golang.org/x/net/bpf"

	"github.com/dissect-tools/dissect/capture"
)

// A Matcher runs a capture filter on packets read from files (-f with
// -r), as the kernel runs it on a live capture: the same compiler, the
// program run by x/net/bpf's interpreter, compiled once per link type
// met. It is used by one goroutine.
type Matcher struct {
	expr string
	vms  map[capture.LinkType]*bpf.VM
}

// NewMatcher checks expr (compiled for Ethernet) and returns its Matcher.
func NewMatcher(expr string) (*Matcher, error) {
	m := &Matcher{expr: expr, vms: map[capture.LinkType]*bpf.VM{}}
	if _, err := m.vm(capture.LinkEthernet); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Matcher) vm(lt capture.LinkType) (*bpf.VM, error) {
	if vm, ok := m.vms[lt]; ok {
		return vm, nil
	}
	prog, err := Compile(m.expr, lt, 1<<18) // any length but 0 (reject)
	if err != nil {
		return nil, err
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", m.expr, err)
	}
	m.vms[lt] = vm
	return vm, nil
}

// Match reports whether the filter accepts p (its captured bytes, as a
// live capture's filter sees them). An error says the filter cannot be
// run on p's link type.
func (m *Matcher) Match(p *capture.Packet) (bool, error) {
	vm, err := m.vm(p.LinkType)
	if err != nil {
		return false, err
	}
	n, err := vm.Run(p.Data)
	if err != nil {
		return false, fmt.Errorf("filter %q: %w", m.expr, err)
	}
	return n > 0, nil
}
