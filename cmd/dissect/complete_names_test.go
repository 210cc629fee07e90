package main

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// complete runs cobra's hidden __complete command and returns the
// candidates and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	out, stderr, code := cli(t, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d: %s", args, code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// protocolsTable reads 'dissect protocols': each protocol's name, its
// transports and its default ports as the table shows them.
func protocolsTable(t *testing.T) (names []string, transports, ports map[string][]string) {
	t.Helper()
	t.Setenv("COLUMNS", "300") // one line per protocol
	out, _, code := cli(t, "protocols")
	if code != 0 {
		t.Fatal(code)
	}
	transports, ports = map[string][]string{}, map[string][]string{}
	cols := regexp.MustCompile(`\s{2,}`)
	for _, line := range strings.Split(out, "\n")[1:] {
		if line == "" || line[0] == ' ' {
			continue
		}
		f := cols.Split(line, -1)
		if len(f) < 4 {
			break // the detection text after the table
		}
		names = append(names, f[0])
		transports[f[0]] = strings.Split(f[1], ", ")
		if f[2] != "none" {
			ports[f[0]] = strings.Split(f[2], ", ")
		}
	}
	if len(names) < 5 {
		t.Fatalf("'dissect protocols' lists %q", names)
	}
	return names, transports, ports
}

// TestCompleteDecodeAs: -d completes to the default ports of 'dissect
// protocols' in tshark's form, serial,NAME for the protocols a serial
// link carries, and the selectors; after a selector, the protocols of its
// transport.
func TestCompleteDecodeAs(t *testing.T) {
	names, transports, ports := protocolsTable(t)
	var want []string
	for _, n := range names {
		for _, p := range ports[n] { // tcp/3883
			tr, num, _ := strings.Cut(p, "/")
			want = append(want, tr+".port=="+num+","+n)
		}
	}
	for _, n := range names {
		if slices.Contains(transports[n], "serial") {
			want = append(want, "serial,"+n)
		}
	}
	want = append(want, "tcp.port==", "udp.port==")
	got, dir := complete(t, "-d", "")
	if !slices.Equal(got, want) {
		t.Errorf("-d '': %q, want %q", got, want)
	}
	if !strings.Contains(dir, ":6") { // NoSpace|NoFileComp: a selector needs its port
		t.Errorf("-d '': directive %s", dir)
	}
	if !slices.Contains(want, "tcp.port==3883,vrpn") || !slices.Contains(want, "udp.port==7681,roboid") {
		t.Errorf("the protocols table lost VRPN's or Roboid's port: %q", want)
	}
	got, _ = complete(t, "-d", "udp.port==7")
	if !slices.Equal(got, []string{"udp.port==7681,roboid"}) {
		t.Errorf("-d udp.port==7: %q", got)
	}
	var overUDP []string
	for _, n := range names {
		if slices.Contains(transports[n], "udp") {
			overUDP = append(overUDP, "udp.port==9000,"+n)
		}
	}
	got, _ = complete(t, "-d", "udp.port==9000,")
	if !slices.Equal(got, overUDP) || len(got) < 2 {
		t.Errorf("-d udp.port==9000,: %q, want %q", got, overUDP)
	}
	got, _ = complete(t, "serial", "-d", "serial,hand")
	if !slices.Equal(got, []string{"serial,handcontrol"}) {
		t.Errorf("serial -d serial,hand: %q", got)
	}
}

// fieldsListed reads the names 'dissect protocols --fields' lists: the
// record keys of its first sentence and each protocol's PROTO.FIELD.
func fieldsListed(t *testing.T) []string {
	t.Helper()
	t.Setenv("COLUMNS", "300")
	out, _, code := cli(t, "protocols", "--fields")
	if code != 0 {
		t.Fatal(code)
	}
	m := regexp.MustCompile(`Every record has the keys ([a-z_, ]+);`).FindStringSubmatch(strings.ReplaceAll(out, "\n", " "))
	if m == nil {
		t.Fatalf("no record keys in %.300q", out)
	}
	names := strings.Split(m[1], ", ")
	flat := strings.Join(strings.Fields(out), " ")
	more := regexp.MustCompile(`-Y and -e also take ([a-z0-9_., ]+), and tshark's names (.+?)\. `).FindStringSubmatch(flat)
	if more == nil {
		t.Fatalf("no further names in %.600q", flat)
	}
	names = append(names, strings.Split(more[1], ", ")...)
	for _, n := range strings.Split(more[2], ", ") {
		names = append(names, strings.Fields(n)[0]) // "frame.time_epoch (time_epoch)"
	}
	field := regexp.MustCompile(`^  ([a-z0-9_-]+\.\S+)`)
	for _, line := range strings.Split(out, "\n") {
		if f := field.FindStringSubmatch(line); f != nil && !slices.Contains(names, f[1]) {
			names = append(names, f[1])
		}
	}
	return names
}

// TestCompleteFieldNames: -e completes to every name 'dissect protocols
// --fields' lists, envelope keys included, and to those of a prefix; -Y
// completes the name being typed at the end of an expression.
func TestCompleteFieldNames(t *testing.T) {
	want := fieldsListed(t)
	if len(want) < 100 || !slices.Contains(want, "deltarobot.x") || !slices.Contains(want, "stream") {
		t.Fatalf("protocols --fields lists %d names: %q", len(want), want)
	}
	got, _ := complete(t, "-o", "fields", "-e", "")
	a, b := slices.Clone(got), slices.Clone(want)
	sort.Strings(a)
	sort.Strings(b)
	if !slices.Equal(a, b) {
		t.Errorf("-e '': %d names, protocols --fields lists %d", len(a), len(b))
		for _, n := range b {
			if !slices.Contains(a, n) {
				t.Errorf("  not offered: %s", n)
			}
		}
	}
	got, _ = complete(t, "-e", "deltarobot.")
	for _, n := range got {
		if !strings.HasPrefix(n, "deltarobot.") {
			t.Errorf("-e deltarobot.: %q", n)
		}
	}
	if !slices.Contains(got, "deltarobot.x") {
		t.Errorf("-e deltarobot.: %q lacks deltarobot.x", got)
	}
	expr := `type == "pong" && deltarobot.`
	got, dir := complete(t, "-Y", expr)
	if !slices.Contains(got, expr+"x") || !strings.Contains(dir, ":6") {
		t.Errorf("-Y %q: %q (%s)", expr, got, dir)
	}
	for _, n := range got {
		if !strings.HasPrefix(n, expr) {
			t.Errorf("-Y %q: candidate %q does not keep what was typed", expr, n)
		}
	}
	if got, _ := complete(t, "-Y", "str"); !slices.Equal(got, []string{"stream"}) {
		t.Errorf("-Y str: %q", got)
	}
	if got, _ := complete(t, "-Y", `type == "po`); len(got) != 0 {
		t.Errorf("-Y inside a string: %q", got)
	}
}
