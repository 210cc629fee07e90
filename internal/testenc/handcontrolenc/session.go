package handcontrolenc

import "time"

// Vector frames and bytes of protocols.md §1.9 used by the sessions.
var (
	// BadCRCSetSettings is the repositories' SetSettings test frame with
	// payload ab cd (not protobuf) and the wrong CRC 0x8a (0x23 is right).
	BadCRCSetSettings = []byte{0xfd, 0xba, 0xdc, 0x01, 0x50, 0xb4, 0x11, 0xff, 0x05, 0x02, 0x00, 0xab, 0xcd, 0x8a}
	// Garbage is the C# test's run of bytes with a bad SFD, which a parser
	// must skip between frames.
	Garbage = []byte{0xfb, 0xba, 0xdc, 0xfa, 0xad, 0xbd, 0x23, 0xaa, 0xd1, 0x32}
)

// Gesture ids used by the sessions (textual UUIDs). GestureFist is the one
// in the §1.9 telemetry vector.
const (
	GestureFist    = "97f72d84-b856-4934-8d80-2b3ff5ad41d5"
	GesturePinch   = "3c9e1f20-5b7a-4d0e-9f61-0a2b4c6d8e10"
	GestureUnknown = "e4b2a7c1-0d93-4f58-b6a2-71c3d5e9f024"
)

// SyncTime is the last_time_sync the sessions' device reports: 2021-05-08
// 12:00:00 UTC.
const SyncTime int64 = 1620475200

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func tele(k int, gesture string) Telemetry {
	t := Telemetry{
		EMGStatus: ModuleStatusWork, DisplayStatus: ModuleStatusDisabled, GyroStatus: ModuleStatusConnectionError,
		DriverStatus: DriverStatusSleep, LastTimeSync: SyncTime, EMG: int32(310 + 17*k), ExecutableGesture: gesture,
		Power: int32(87 - k), Fingers: Fingers{10, 20, 30, 40, 50},
	}
	if gesture != "" {
		t.DriverStatus = DriverStatusSettingPosition
		t.Fingers = Fingers{Pointer: 80 + int32(k), Middle: 85, Ring: 90, Little: 95, Thumb: 60}
	}
	if k == 3 {
		t.GyroStatus = ModuleStatusError
		t.EMGStatus = ModuleStatusInitialization // 0: not on the wire
	}
	return t
}

// SerialSession returns the session of the serial sample: a host (the PC
// configurator) and the prosthesis on a UART, every frame a write that the
// capture cuts into reads. Times are whole milliseconds, so latencies are
// too.
//
//	host                                   device
//	GetSettings (empty)            10 ms   GetSettings{emg, display, driver}  25 ms
//	SetPositions{10,20,30,40,50}  140 ms   ACK                               152 ms
//	StartTelemetry{100}           300 ms   ACK                               305 ms
//	                                       Telemetry every 100 ms from 405 ms to 805 ms
//	PerformGestureId{unknown id}  450 ms   ERR{"gesture ... not found"}      468 ms
//	                                       the §1.9 garbage before the 505 ms telemetry
//	GetMioPatterns (empty)        550 ms   type 13 with GetMioPatterns{2}    571 ms (warning: quirk)
//	§1.9 SetSettings, wrong CRC   650 ms   ERR{"Error parsing message"}      662 ms
//	                                       (telemetry queued before it, same write)
//	StopTelemetry                 850 ms   ACK                               858 ms
//
// The bad-CRC frame is decoded (crc_ok false, payload_hex abcd, a
// warning) and answered: the Python slave never checks CRCs and fails to
// parse the payload. The telemetry at 705 ms carries GestureFist as the
// executable gesture.
func SerialSession() (*Session, error) {
	f := NewFlow()
	f.Request(ms(10), CodeGetSettings, nil)
	f.Reply(ms(25), CodeGetSettings, GetSettings(Settings{EnableEMG: true, EnableDisplay: true, EnableDriver: true}))
	f.Request(ms(140), CodeSetPositions, SetPositions(Fingers{10, 20, 30, 40, 50}))
	f.Reply(ms(152), CodeACK, nil)
	f.Request(ms(300), CodeStartTelemetry, StartTelemetry(100))
	f.Reply(ms(305), CodeACK, nil)
	f.Telemetry(ms(405), tele(0, ""))
	f.Request(ms(450), CodePerformGestureID, PerformGestureByID(GestureUnknown))
	f.Reply(ms(468), CodeERR, Error("Gesture with id "+GestureUnknown+" not found"))
	f.Noise(Device, Garbage)
	f.Telemetry(ms(505), tele(1, ""))
	f.Request(ms(550), CodeGetMioPatterns, nil)
	f.Reply(ms(571), CodeGetTelemetry, GetMioPatterns(
		MioPattern{Pattern: 1, GestureID: GestureFist},
		MioPattern{Pattern: 2, GestureID: GesturePinch},
	))
	f.Telemetry(ms(605), tele(2, ""))
	f.RequestRaw(ms(650), CodeSetSettings, BadCRCSetSettings[11:13], WithCRC(BadCRCSetSettings[13]))
	f.QueueTelemetry(tele(3, ""))
	f.Reply(ms(662), CodeERR, Error("Error parsing message"))
	f.Telemetry(ms(705), tele(4, GestureFist))
	f.Telemetry(ms(805), tele(5, GestureFist))
	f.Request(ms(850), CodeStopTelemetry, nil)
	f.Reply(ms(858), CodeACK, nil)
	return f.Finish()
}

// BridgeSession returns the session of the TCP sample: the same link
// carried by a serial-to-TCP bridge, shorter.
//
//	host                                   device
//	GetGestures (empty)            20 ms   GetGestures{2 gestures with actions}  41 ms
//	PerformGestureId{pinch}        90 ms   ACK                                  102 ms
//	StartTelemetry{50}            150 ms   ACK                                  154 ms
//	                                       Telemetry at 204, 254, 304 ms
//	StopTelemetry                 350 ms   Telemetry and ACK back to back       357 ms
//	GetTelemetry (empty)          400 ms   GetTelemetry{telemetry}              409 ms
func BridgeSession() (*Session, error) {
	f := NewFlow()
	f.Request(ms(20), CodeGetGestures, nil)
	f.Reply(ms(41), CodeGetGestures, GetGestures(SyncTime,
		Gesture{ID: GestureFist, Name: "Fist", LastTimeSync: SyncTime - 3600, Iterable: false, Repetitions: 1, Actions: []GestureAction{
			{Fingers: Fingers{90, 90, 90, 90, 70}, Delay: 400},
		}},
		Gesture{ID: GesturePinch, Name: "Pinch", LastTimeSync: SyncTime - 60, Iterable: true, Repetitions: 3, Actions: []GestureAction{
			{Fingers: Fingers{70, 0, 0, 0, 65}, Delay: 250},
			{Fingers: Fingers{10, 10, 10, 10, 10}, Delay: 250},
		}},
	))
	f.Request(ms(90), CodePerformGestureID, PerformGestureByID(GesturePinch))
	f.Reply(ms(102), CodeACK, nil)
	f.Request(ms(150), CodeStartTelemetry, StartTelemetry(50))
	f.Reply(ms(154), CodeACK, nil)
	f.Telemetry(ms(204), tele(0, GesturePinch))
	f.Telemetry(ms(254), tele(1, GesturePinch))
	f.Telemetry(ms(304), tele(2, ""))
	f.Request(ms(350), CodeStopTelemetry, nil)
	f.QueueTelemetry(tele(3, ""))
	f.Reply(ms(357), CodeACK, nil)
	f.Request(ms(400), CodeGetTelemetry, nil)
	f.Reply(ms(409), CodeGetTelemetry, GetTelemetry(tele(4, "")))
	return f.Finish()
}
