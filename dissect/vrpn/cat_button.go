package vrpn

import (
	"strconv"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// Mainline's button modes (vrpn_Button.h): vrpn_BUTTON_MOMENTARY,
// vrpn_BUTTON_TOGGLE_OFF and vrpn_BUTTON_TOGGLE_ON.
const (
	buttonMomentary = 10
	buttonToggleOff = 20
	buttonToggleOn  = 21
)

// buttonAllID is mainline's vrpn_ALL_ID: an Admin message for every button.
const buttonAllID = -99

// buttonDefs lists the catalogued types of mainline's vrpn_Button.C beyond
// Change and States (decode.go): Admin, with which a client switches
// buttons between momentary and toggle (vrpn_Button set_toggle,
// set_momentary, set_all_toggle, set_all_momentary), and Alert, with
// which a server's vrpn_Button_Filter reports a button's new toggle state
// when its alerts are on. Both are two int32, button then mode, written by
// vrpn_Button::encode_to. Mainline's filter sends Alerts with a zero
// timestamp (it never sets the one it uses), so their sent time is
// 1970-01-01.
func buttonDefs() []msgDef {
	return []msgDef{{
		name: "vrpn_Button Admin",
		doc:  "a client switches a button, or every button, between momentary and toggle (vrpn_Button set_toggle / set_momentary / set_all_*)",
		body: []layout.Field{
			i32f("button", "button number, from 0; -99 (mainline's vrpn_ALL_ID) for every button"),
			enumf("mode", "the button's mode (another number: the server ignores it)", "button_mode"),
		},
		decode: func(c *dissect.Ctx, b []byte) ([]byte, bool) { return decodeButtonMode(c, b, "vrpn_Button Admin") },
	}, {
		name: "vrpn_Button Alert",
		doc:  "the server reports a toggle button's new state, when its alerts are on (vrpn_Button_Filter; sent time 0)",
		body: []layout.Field{
			i32f("button", "button number, from 0"),
			enumf("mode", "the button's toggle state now (toggle_off or toggle_on)", "button_mode"),
		},
		decode: func(c *dissect.Ctx, b []byte) ([]byte, bool) { return decodeButtonMode(c, b, "vrpn_Button Alert") },
	}}
}

// decodeButtonMode decodes i32 button, i32 mode.
func decodeButtonMode(c *dissect.Ctx, b []byte, name string) ([]byte, bool) {
	r := c.Rec
	if len(b) < 8 {
		what, off := "mode", 4
		if len(b) < 4 {
			what, off = "button", 0
		}
		r.Warnf("body of %d bytes too short for %s: %s at offset %d needs 4 bytes", len(b), name, what, off)
		return nil, false
	}
	long(c, b, 8, name)
	button, mode := i32(b), i32(b[4:])
	m, ok := enumName("button_mode", int64(mode))
	if !ok {
		r.Warnf("%s: mode %d at offset 4 is not one mainline names", name, mode)
		m = strconv.FormatInt(int64(mode), 10)
	}
	if !c.Decode {
		return nil, true
	}
	r.Add("button", dissect.Int(int64(button)))
	r.Add("mode", dissect.Str(m))
	s := []byte(" button=")
	if button == buttonAllID {
		s = append(s, "all"...)
	} else {
		s = strconv.AppendInt(s, int64(button), 10)
	}
	return append(append(s, " mode="...), m...), true
}
