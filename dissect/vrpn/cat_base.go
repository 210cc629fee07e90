package vrpn

import "github.com/dissect-tools/dissect/dissect/layout"

// Names of vrpn_BaseClass's text message, which every mainline device
// sends for its warnings and errors.
const nameText = "vrpn_Base text_message"

// maxTextLen is mainline's vrpn_MAX_TEXT_LEN: a text message's body is two
// uint32 then this many bytes, the NUL-terminated text followed by
// whatever the sender's buffer held.
const maxTextLen = 1024

// baseDefs lists the catalogued types of mainline's vrpn_BaseClass.C
// (ping and pong are decoded by roundtrip.go).
func baseDefs() []msgDef {
	return []msgDef{{
		name: nameText,
		doc:  "a device's text message: a notice, warning or error (vrpn_BaseClass send_text_message)",
		body: []layout.Field{
			enumf("severity", "mainline's vrpn_TEXT_SEVERITY", "text_severity"),
			u32f("level", "the sender's level of the message"),
			textf("text", maxTextLen, "the text up to its NUL; the bytes after it are stale memory of the sender and are not kept"),
		},
	}}
}
