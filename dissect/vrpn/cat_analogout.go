package vrpn

import "github.com/dissect-tools/dissect/dissect/layout"

// analogOutputDefs lists the catalogued types of mainline's
// vrpn_Analog_Output.C: a client's vrpn_Analog_Output_Remote asks the
// server to set one channel or the first num_channels channels, and the
// server's vrpn_Analog_Output_Server tells every client that connects how
// many channels it has (on mainline's local got-connection event, not in
// answer to a message, so the three are no request/reply pair).
func analogOutputDefs() []msgDef {
	pad := i32f("pad", "filler mainline writes as 0 so that the doubles after it fall on 8 bytes; the value sent")
	return []msgDef{{
		name: "vrpn_Analog_Output Change_request",
		doc:  "a client asks the server to set one output channel (vrpn_Analog_Output_Remote request_change_channel_value)",
		body: []layout.Field{
			i32f("channel", "channel number, from 0"),
			pad,
			f64f("value", "", "value asked for (meaning set by the device)"),
		},
	}, {
		name: "vrpn_Analog_Output Change_Channels_request",
		doc:  "a client asks the server to set its first num_channels output channels (vrpn_Analog_Output_Remote request_change_channels)",
		body: []layout.Field{
			i32f("num_channels", "how many channels follow, channels 0 to num_channels-1 (mainline's remote sends at most 128)"),
			pad,
			arrayf("channels", "f8", "num_channels", "", "value asked for each channel, channels[0] channel 0's (meaning set by the device)"),
		},
	}, {
		name: "vrpn_Analog_Output Num_Channels_report",
		doc:  "the server tells a client that connected how many output channels are active (vrpn_Analog_Output_Server report_num_channels)",
		body: []layout.Field{i32f("num_channels", "number of active output channels (mainline's remote ignores a value outside 0 to 128)")},
	}}
}
