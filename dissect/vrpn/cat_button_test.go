package vrpn

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
