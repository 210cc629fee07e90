package vrpn

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
