package vrpn

import (
	"strings"
	"testing"
)

// baseSamples are text messages as vrpn_BaseClassUnique's
// encode_text_message_to_buffer writes them: u32 severity, u32 level, the
// text and its NUL in a buffer of vrpn_MAX_TEXT_LEN (1024) bytes, the
// whole 1,032 bytes sent, whatever the buffer held after the NUL included.
func baseSamples() []sample {
	stale := padTo([]byte("Tracker: lost sensor 2\x00"), 1024)
	for i := 40; i < 1024; i += 7 {
		stale[i] = byte(i) // stale memory after the NUL
	}
	return []sample{
		{nameText, wbe(uint32(0), uint32(0), padTo([]byte("hello\x00"), 1024)), `{"severity":"normal","level":0,"text":"hello"}`},
		{nameText, wbe(uint32(1), uint32(3), stale), `{"severity":"warning","level":3,"text":"Tracker: lost sensor 2"}`},
		{nameText, wbe(uint32(2), uint32(0), "No response from server for 3 seconds\x00"),
			`{"severity":"error","level":0,"text":"No response from server for 3 seconds"}`},
	}
}

// TestTextBuffer: a text buffer with no NUL is kept whole with a warning;
// a body that stops inside the buffer before any NUL cannot be read (data,
// with a warning); one that stops right after the NUL is whole (baseSamples).
func TestTextBuffer(t *testing.T) {
	cases := []struct {
		body []byte
		text string // "": data
		warn string
	}{
		{wbe(uint32(0), uint32(0), bytesOf('a', 1024)), string(bytesOf('a', 1024)), "vrpn_Base text_message: text fills its 1024 bytes with no NUL"},
		{wbe(uint32(0), uint32(0), "abc"), "", "body of 11 bytes too short for vrpn_Base text_message"},
		{wbe(uint32(0), uint32(0), "abc\x00"), "abc", ""},
	}
	for i, tc := range cases {
		run := fuzzFeed(catalogueStream([]sample{{nameText, tc.body, ""}}), 0, 1, true)
		r := run.recs[len(run.recs)-1]
		w := strings.Join(r.Warnings, "; ")
		if tc.warn == "" && w != "" || !strings.Contains(w, tc.warn) {
			t.Errorf("case %d: warnings %q, want %q", i, r.Warnings, tc.warn)
		}
		key := "text"
		if tc.text == "" {
			key = "data"
		}
		v, ok := r.Fields.Get(key)
		if !ok || tc.text != "" && v.Str() != tc.text {
			t.Errorf("case %d: %s = %v (present %v), want %.20q", i, key, v, ok, tc.text)
		}
	}
}
