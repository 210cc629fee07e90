package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
)

// Completion of -d, -Y and -e from the protocols' registry: the names
// and ports 'dissect protocols' lists and the field names of 'dissect
// protocols --fields' (record keys first). The registry is the default
// one: fields that only --proto files declare are not offered.

// completionRegistry builds the registry the completions read.
func completionRegistry() (*dissect.Registry, error) {
	var po protoFlags
	return all.Registry(po.options())
}

// decodeAsCandidates are -d's completions of typed: with no comma yet,
// every protocol's default ports (tcp.port==3883,vrpn), serial,NAME for
// the protocols a serial link carries, and the selectors tcp.port== and
// udp.port== to type a port after; after SELECTOR, the protocols that run
// over the selector's transport. noSpace is set when a candidate still
// needs typing (a selector without its port).
func decodeAsCandidates(reg *dissect.Registry, typed string) (cands []string, noSpace bool) {
	if sel, _, ok := strings.Cut(typed, ","); ok {
		want := dissect.Serial
		switch {
		case strings.HasPrefix(sel, "tcp.port=="):
			want = dissect.TCP
		case strings.HasPrefix(sel, "udp.port=="):
			want = dissect.UDP
		case sel != "serial":
			return nil, false
		}
		for _, p := range reg.Protocols() {
			in := p.Info()
			if slices.Contains(in.Transports, want) {
				cands = append(cands, sel+","+in.Name)
			}
		}
		return filterPrefix(cands, typed), false
	}
	for _, p := range reg.Protocols() {
		in := p.Info()
		for _, port := range in.Ports {
			cands = append(cands, fmt.Sprintf("%s.port==%d,%s", port.Transport, port.Port, in.Name))
		}
	}
	for _, p := range reg.Protocols() {
		in := p.Info()
		if slices.Contains(in.Transports, dissect.Serial) {
			cands = append(cands, "serial,"+in.Name)
		}
	}
	cands = filterPrefix(append(cands, "tcp.port==", "udp.port=="), typed)
	for _, c := range cands {
		if strings.HasSuffix(c, "==") {
			noSpace = true
		}
	}
	return cands, noSpace
}

// fieldNames are the names -Y and -e take: the record keys, then each
// protocol's fields as PROTO.FIELD, in the order of 'dissect protocols
// --fields'.
func fieldNames(reg *dissect.Registry) []string {
	var names []string
	for _, k := range dissect.Envelope() {
		names = append(append(names, k.Name), k.TShark...)
	}
	seen := map[string]bool{}
	for _, p := range reg.Protocols() {
		in := p.Info()
		for _, f := range dissect.FieldInfos(in.Types) {
			n := in.Proto + "." + f.Name
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	return names
}

// filterPrefix keeps the candidates that begin with typed.
func filterPrefix(cands []string, typed string) []string {
	out := cands[:0]
	for _, c := range cands {
		if strings.HasPrefix(c, typed) {
			out = append(out, c)
		}
	}
	return out
}

// filterWordCandidates completes the last name of a display filter being
// typed ('type == "pong" && deltarobot.'): the text before it is kept, so
// that the shell replaces the whole argument with the completed one.
func filterWordCandidates(names []string, typed string) []string {
	i := len(typed)
	for i > 0 && isNameByte(typed[i-1]) {
		i--
	}
	head, word := typed[:i], typed[i:]
	if strings.Count(head, `"`)%2 == 1 {
		return nil // inside a quoted string: a value, not a name
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, word) {
			out = append(out, head+n)
		}
	}
	return out
}

func isNameByte(c byte) bool {
	return c == '_' || c == '.' || c == '[' || c == ']' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// nameCompletions are the completion functions of -d, -Y and -e.
func nameCompletions() map[string]cobra.CompletionFunc {
	return map[string]cobra.CompletionFunc{
		"decode-as": func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
			reg, err := completionRegistry()
			if err != nil {
				return nil, cobra.ShellCompDirectiveError
			}
			c, noSpace := decodeAsCandidates(reg, typed)
			d := cobra.ShellCompDirectiveNoFileComp
			if noSpace {
				d |= cobra.ShellCompDirectiveNoSpace
			}
			return c, d
		},
		"display-filter": func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
			reg, err := completionRegistry()
			if err != nil {
				return nil, cobra.ShellCompDirectiveError
			}
			return filterWordCandidates(fieldNames(reg), typed), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		},
		"field": func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
			reg, err := completionRegistry()
			if err != nil {
				return nil, cobra.ShellCompDirectiveError
			}
			return filterPrefix(fieldNames(reg), typed), cobra.ShellCompDirectiveNoFileComp
		},
	}
}
