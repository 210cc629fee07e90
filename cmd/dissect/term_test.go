package main

import (
	"os"
	"testing"

	"github.com/creack/pty"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// TestTerminalOf: COLUMNS wins; else a terminal's own size; a pipe is
// unlimited; the locale decides UTF-8.
func TestTerminalOf(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if got := terminalOf(w, env(nil)); got.tty || got.width != 0 || !got.utf8 {
		t.Errorf("pipe: %+v, want not a tty, unlimited, UTF-8", got)
	}
	if got := terminalOf(w, env(map[string]string{"COLUMNS": "55", "LANG": "C"})); got.width != 55 || got.utf8 {
		t.Errorf("pipe, COLUMNS=55, LANG=C: %+v", got)
	}
	m, s, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer m.Close()
	defer s.Close()
	if err := pty.Setsize(m, &pty.Winsize{Cols: 132, Rows: 40}); err != nil {
		t.Fatal(err)
	}
	if got := terminalOf(s, env(nil)); !got.tty || got.width != 132 {
		t.Errorf("pty of 132 columns: %+v", got)
	}
	if got := terminalOf(s, env(map[string]string{"COLUMNS": "70"})); got.width != 70 {
		t.Errorf("pty, COLUMNS=70: %+v", got)
	}
	if got := terminalOf(s, env(map[string]string{"COLUMNS": "junk"})); got.width != 132 {
		t.Errorf("pty, COLUMNS=junk: %+v", got)
	}
	if err := pty.Setsize(m, &pty.Winsize{}); err != nil {
		t.Fatal(err)
	}
	if got := terminalOf(s, env(nil)); got.width != defaultWidth {
		t.Errorf("pty of unknown size: %+v, want %d", got, defaultWidth)
	}
}

func TestUTF8Locale(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, true},
		{map[string]string{"LANG": "C"}, false},
		{map[string]string{"LANG": "POSIX"}, false},
		{map[string]string{"LANG": "en_US.UTF-8"}, true},
		{map[string]string{"LANG": "de_DE.utf8"}, true},
		{map[string]string{"LANG": "en_US.UTF-8", "LC_ALL": "C"}, false},
		{map[string]string{"LANG": "C", "LC_CTYPE": "C.UTF-8"}, true},
		{map[string]string{"LANG": "en_US.ISO-8859-1"}, false},
	} {
		if got := utf8Locale(env(tc.env)); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.env, got, tc.want)
		}
	}
}
