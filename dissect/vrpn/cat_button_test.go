package vrpn

import "testing"

// buttonSamples are vrpn_Button's Admin and Alert messages as
// vrpn_Button::encode_to writes them: i32 button, i32 mode (10 momentary,
// 20 toggle off, 21 toggle on; button -99 for every button).
func buttonSamples() []sample {
	return []sample{
		{"vrpn_Button Admin", wbe(int32(1), int32(21)), `{"button":1,"mode":"toggle_on"}`},
		{"vrpn_Button Admin", wbe(int32(1), int32(10)), `{"button":1,"mode":"momentary"}`},
		{"vrpn_Button Admin", wbe(int32(-99), int32(20)), `{"button":-99,"mode":"toggle_off"}`},
		{"vrpn_Button Alert", wbe(int32(2), int32(20)), `{"button":2,"mode":"toggle_off"}`},
		{"vrpn_Button Alert", wbe(int32(0), int32(21)), `{"button":0,"mode":"toggle_on"}`},
	}
}

// TestButtonModeMalformed: a mode mainline does not name is kept as its
// number with a warning naming the offset; a short body stays data.
func TestButtonModeMalformed(t *testing.T) {
	for _, c := range []struct {
		body []byte
		warn string
		mode string // "" when the body stays data
	}{
		{wbe(int32(3), int32(11)), "vrpn_Button Admin: mode 11 at offset 4 is not one mainline names", "11"},
		{wbe(int32(3), uint16(0)), "body of 6 bytes too short for vrpn_Button Admin: mode at offset 4 needs 4 bytes", ""},
		{wbe(uint16(0)), "body of 2 bytes too short for vrpn_Button Admin: button at offset 0 needs 4 bytes", ""},
	} {
		run := fuzzFeed(catalogueStream([]sample{{name: "vrpn_Button Admin", body: c.body}}), 0, 1, true)
		r := run.recs[len(run.recs)-1]
		m, _ := r.Fields.Get("mode")
		_, data := r.Fields.Get("data")
		if len(r.Warnings) != 1 || r.Warnings[0] != c.warn || m.Str() != c.mode || data != (c.mode == "") {
			t.Errorf("body %x: warnings %q mode %q data %v; want %q, mode %q", c.body, r.Warnings, m.Str(), data, c.warn, c.mode)
		}
	}
}
