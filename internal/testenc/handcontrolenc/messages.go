package handcontrolenc

// Messages of protobuf schema v2 (protocols.md §1.6; packages uuid,
// errors, settings, telemetry (which also holds the gesture messages),
// patterns) and the v1 Telemetry (§1.7). Each builder writes its fields in
// field-number order, as protobuf libraries do.

// Full names of the v2 messages.
const (
	NameUUID               = "uuid.UUID"
	NameError              = "errors.Error"
	NameGetSettings        = "settings.GetSettings"
	NameSetSettings        = "settings.SetSettings"
	NameTelemetry          = "telemetry.Telemetry"
	NameGetTelemetry       = "telemetry.GetTelemetry"
	NameStartTelemetry     = "telemetry.StartTelemetry"
	NameGetGestures        = "telemetry.GetGestures"
	NameSaveGesture        = "telemetry.SaveGesture"
	NameDeleteGesture      = "telemetry.DeleteGesture"
	NamePerformGestureByID = "telemetry.PerformGestureById"
	NamePerformGestureRaw  = "telemetry.PerformGestureRaw"
	NameSetPositions       = "telemetry.SetPositions"
	NameGesture            = "telemetry.Gesture"
	NameGestureAction      = "telemetry.GestureAction"
	NameUpdateLastTimeSync = "telemetry.UpdateLastTimeSync"
	NameMioPattern         = "patterns.MioPattern"
	NameGetMioPatterns     = "patterns.GetMioPatterns"
	NameSetMioPatterns     = "patterns.SetMioPatterns"
)

// ModuleStatus is enums.ModuleStatusType.
type ModuleStatus int32

// Values of enums.ModuleStatusType.
const (
	ModuleStatusInitialization  ModuleStatus = 0
	ModuleStatusWork            ModuleStatus = 1
	ModuleStatusError           ModuleStatus = 2
	ModuleStatusConnectionError ModuleStatus = 3
	ModuleStatusDisabled        ModuleStatus = 4
)

// String returns the value's full name, e.g. "MODULE_STATUS_WORK", or ""
// for a number the enum lacks.
func (s ModuleStatus) String() string {
	switch s {
	case ModuleStatusInitialization:
		return "MODULE_STATUS_INITIALIZATION"
	case ModuleStatusWork:
		return "MODULE_STATUS_WORK"
	case ModuleStatusError:
		return "MODULE_STATUS_ERROR"
	case ModuleStatusConnectionError:
		return "MODULE_STATUS_CONNECTION_ERROR"
	case ModuleStatusDisabled:
		return "MODULE_STATUS_DISABLED"
	}
	return ""
}

// DriverStatus is enums.DriverStatusType.
type DriverStatus int32

// Values of enums.DriverStatusType.
const (
	DriverStatusInitialization  DriverStatus = 0
	DriverStatusError           DriverStatus = 1
	DriverStatusConnectionError DriverStatus = 2
	DriverStatusDisabled        DriverStatus = 3
	DriverStatusSleep           DriverStatus = 4
	DriverStatusSettingPosition DriverStatus = 5
)

// String returns the value's full name, e.g. "DRIVER_STATUS_SLEEP", or ""
// for a number the enum lacks.
func (s DriverStatus) String() string {
	switch s {
	case DriverStatusInitialization:
		return "DRIVER_STATUS_INITIALIZATION"
	case DriverStatusError:
		return "DRIVER_STATUS_ERROR"
	case DriverStatusConnectionError:
		return "DRIVER_STATUS_CONNECTION_ERROR"
	case DriverStatusDisabled:
		return "DRIVER_STATUS_DISABLED"
	case DriverStatusSleep:
		return "DRIVER_STATUS_SLEEP"
	case DriverStatusSettingPosition:
		return "DRIVER_STATUS_SETTING_POSITION"
	}
	return ""
}

// UUID returns uuid.UUID {1: string value}: the textual UUID, not 16 raw
// bytes.
func UUID(id string) *Msg { return NewMsg(NameUUID).Str(1, "value", id) }

// Error returns errors.Error {1: string message}, the ERR payload.
func Error(message string) *Msg { return NewMsg(NameError).Str(1, "message", message) }

// Settings are the flags of settings.GetSettings (fields 1-4) and
// settings.SetSettings (1-4, and 5 power_off).
type Settings struct {
	EnableEMG, EnableDisplay, EnableGyro, EnableDriver bool
}

func (s Settings) write(m *Msg) *Msg {
	return m.Bool(1, "enable_emg", s.EnableEMG).Bool(2, "enable_display", s.EnableDisplay).
		Bool(3, "enable_gyro", s.EnableGyro).Bool(4, "enable_driver", s.EnableDriver)
}

// GetSettings returns settings.GetSettings, the device's reply to code 4.
func GetSettings(s Settings) *Msg { return s.write(NewMsg(NameGetSettings)) }

// SetSettings returns settings.SetSettings, the payload of code 5.
func SetSettings(s Settings, powerOff bool) *Msg {
	return s.write(NewMsg(NameSetSettings)).Bool(5, "power_off", powerOff)
}

// Fingers are the five finger positions, in field order.
type Fingers struct {
	Pointer, Middle, Ring, Little, Thumb int32
}

func (f Fingers) write(m *Msg, first int) *Msg {
	return m.Int32(first, "pointer_finger_position", f.Pointer).Int32(first+1, "middle_finger_position", f.Middle).
		Int32(first+2, "ring_finger_position", f.Ring).Int32(first+3, "little_finger_position", f.Little).
		Int32(first+4, "thumb_finger_position", f.Thumb)
}

// SetPositions returns telemetry.SetPositions (fields 1-5), the payload of
// code 11.
func SetPositions(f Fingers) *Msg { return f.write(NewMsg(NameSetPositions), 1) }

// Telemetry is telemetry.Telemetry (v2).
type Telemetry struct {
	EMGStatus, DisplayStatus, GyroStatus ModuleStatus
	DriverStatus                         DriverStatus
	LastTimeSync                         int64 // Unix seconds
	EMG                                  int32
	ExecutableGesture                    string // a textual UUID, "" for none
	Power                                int32  // percent
	Fingers                              Fingers
}

// writeV returns the message with the v2 field numbers shifted by shift
// (0 for v2, 1 for v1).
func (t Telemetry) writeV(m *Msg, shift int) *Msg {
	m.Enum(1+shift, "emg_status", int32(t.EMGStatus), t.EMGStatus.String()).
		Enum(2+shift, "display_status", int32(t.DisplayStatus), t.DisplayStatus.String()).
		Enum(3+shift, "gyro_status", int32(t.GyroStatus), t.GyroStatus.String()).
		Enum(4+shift, "driver_status", int32(t.DriverStatus), t.DriverStatus.String()).
		Int64(5+shift, "last_time_sync", t.LastTimeSync).
		Int32(6+shift, "emg", t.EMG).
		UUID(7+shift, "executable_gesture", t.ExecutableGesture).
		Int32(8+shift, "power", t.Power)
	return t.Fingers.write(m, 9+shift)
}

// Msg returns the v2 telemetry.Telemetry message (the payload of type 3).
func (t Telemetry) Msg() *Msg { return t.writeV(NewMsg(NameTelemetry), 0) }

// MsgV1 returns the telemetry in schema v1 (protocols.md §1.7): field 1
// int32 telemetry_frequency, then every v2 field one number higher.
func (t Telemetry) MsgV1(frequency int32) *Msg {
	m := NewMsg(NameTelemetry).Int32(1, "telemetry_frequency", frequency)
	return t.writeV(m, 1)
}

// GetTelemetry returns telemetry.GetTelemetry {1: Telemetry telemetry},
// the device's reply to code 13.
func GetTelemetry(t Telemetry) *Msg {
	return NewMsg(NameGetTelemetry).Message(1, "telemetry", t.Msg())
}

// StartTelemetry returns telemetry.StartTelemetry {1: int32 interval_ms},
// the payload of code 14.
func StartTelemetry(intervalMS int32) *Msg {
	return NewMsg(NameStartTelemetry).Int32(1, "interval_ms", intervalMS)
}

// GestureAction is telemetry.GestureAction: finger positions (1-5) and a
// delay (6).
type GestureAction struct {
	Fingers Fingers
	Delay   int32
}

// Msg returns the action as a message.
func (a GestureAction) Msg() *Msg {
	return a.Fingers.write(NewMsg(NameGestureAction), 1).Int32(6, "delay", a.Delay)
}

// Gesture is telemetry.Gesture.
type Gesture struct {
	ID           string // textual UUID
	Name         string
	LastTimeSync int64
	Iterable     bool
	Repetitions  int32
	Actions      []GestureAction
}

// Msg returns the gesture as a message.
func (g Gesture) Msg() *Msg {
	acts := make([]*Msg, len(g.Actions))
	for i, a := range g.Actions {
		acts[i] = a.Msg()
	}
	return NewMsg(NameGesture).UUID(1, "id", g.ID).Str(2, "name", g.Name).Int64(3, "last_time_sync", g.LastTimeSync).
		Bool(4, "iterable", g.Iterable).Int32(5, "repetitions", g.Repetitions).Repeated(6, "actions", acts...)
}

// GetGestures returns telemetry.GetGestures {1: int64 last_time_sync, 2:
// repeated Gesture gestures}, the device's reply to code 6.
func GetGestures(lastTimeSync int64, gestures ...Gesture) *Msg {
	gs := make([]*Msg, len(gestures))
	for i, g := range gestures {
		gs[i] = g.Msg()
	}
	return NewMsg(NameGetGestures).Int64(1, "last_time_sync", lastTimeSync).Repeated(2, "gestures", gs...)
}

// SaveGesture returns telemetry.SaveGesture {1: int64 time_sync, 2:
// Gesture gesture}, the payload of code 7.
func SaveGesture(timeSync int64, g Gesture) *Msg {
	return NewMsg(NameSaveGesture).Int64(1, "time_sync", timeSync).Message(2, "gesture", g.Msg())
}

// DeleteGesture returns telemetry.DeleteGesture {1: int64 time_sync, 2:
// UUID id}, the payload of code 8.
func DeleteGesture(timeSync int64, id string) *Msg {
	return NewMsg(NameDeleteGesture).Int64(1, "time_sync", timeSync).UUID(2, "id", id)
}

// PerformGestureByID returns telemetry.PerformGestureById {1: UUID id},
// the payload of code 9.
func PerformGestureByID(id string) *Msg { return NewMsg(NamePerformGestureByID).UUID(1, "id", id) }

// PerformGestureRaw returns telemetry.PerformGestureRaw {1: Gesture
// gesture}, the payload of code 10.
func PerformGestureRaw(g Gesture) *Msg {
	return NewMsg(NamePerformGestureRaw).Message(1, "gesture", g.Msg())
}

// UpdateLastTimeSync returns telemetry.UpdateLastTimeSync {1: int64
// last_time_sync}, the payload of code 12.
func UpdateLastTimeSync(t int64) *Msg {
	return NewMsg(NameUpdateLastTimeSync).Int64(1, "last_time_sync", t)
}

// MioPattern is patterns.MioPattern {1: int64 pattern, 2: UUID
// gesture_id}.
type MioPattern struct {
	Pattern   int64
	GestureID string
}

// Msg returns the pattern as a message.
func (p MioPattern) Msg() *Msg {
	return NewMsg(NameMioPattern).Int64(1, "pattern", p.Pattern).UUID(2, "gesture_id", p.GestureID)
}

func patternMsgs(ps []MioPattern) []*Msg {
	out := make([]*Msg, len(ps))
	for i, p := range ps {
		out[i] = p.Msg()
	}
	return out
}

// GetMioPatterns returns patterns.GetMioPatterns {1: repeated MioPattern
// patterns}, the device's reply to code 16 (sent with type 13).
func GetMioPatterns(ps ...MioPattern) *Msg {
	return NewMsg(NameGetMioPatterns).Repeated(1, "patterns", patternMsgs(ps)...)
}

// SetMioPatterns returns patterns.SetMioPatterns, the payload of code 17.
func SetMioPatterns(ps ...MioPattern) *Msg {
	return NewMsg(NameSetMioPatterns).Repeated(1, "patterns", patternMsgs(ps)...)
}

// RequestMessage returns the full name of the message a request with this
// code carries from the host (protocols.md §1.5), "" for the requests with
// no payload (4, 6, 13, 15, 16), and false for codes that are not requests
// (0-3 and above 17).
func RequestMessage(code byte) (string, bool) {
	switch code {
	case CodeGetSettings, CodeGetGestures, CodeGetTelemetry, CodeStopTelemetry, CodeGetMioPatterns:
		return "", true
	case CodeSetSettings:
		return NameSetSettings, true
	case CodeSaveGesture:
		return NameSaveGesture, true
	case CodeDeleteGesture:
		return NameDeleteGesture, true
	case CodePerformGestureID:
		return NamePerformGestureByID, true
	case CodePerformGestureRaw:
		return NamePerformGestureRaw, true
	case CodeSetPositions:
		return NameSetPositions, true
	case CodeUpdateLastTimeSync:
		return NameUpdateLastTimeSync, true
	case CodeStartTelemetry:
		return NameStartTelemetry, true
	case CodeSetMioPatterns:
		return NameSetMioPatterns, true
	}
	return "", false
}

// Answers reports whether a device reply with code reply answers a request
// with code req (protocols.md §1.5): ERR answers any request; ACK the
// commands without data (5, 7-12, 14, 15, 17); a data reply (4, 6, 13)
// its own code; and 13 also answers 16, the device's quirk.
func Answers(reply, req byte) bool {
	if _, ok := RequestMessage(req); !ok {
		return false
	}
	switch reply {
	case CodeERR:
		return true
	case CodeACK:
		switch req {
		case CodeSetSettings, CodeSaveGesture, CodeDeleteGesture, CodePerformGestureID, CodePerformGestureRaw,
			CodeSetPositions, CodeUpdateLastTimeSync, CodeStartTelemetry, CodeStopTelemetry, CodeSetMioPatterns:
			return true
		}
		return false
	case CodeGetSettings, CodeGetGestures:
		return req == reply
	case CodeGetTelemetry:
		return req == CodeGetTelemetry || req == CodeGetMioPatterns
	}
	return false
}

// ReplyMessage returns the full name of the message a device reply with
// code reply to a request with code req carries: "" for ACK,
// errors.Error for ERR, settings.GetSettings for 4, telemetry.GetGestures
// for 6, telemetry.GetTelemetry for 13, and patterns.GetMioPatterns for a
// 13 answering 16.
func ReplyMessage(reply, req byte) string {
	switch reply {
	case CodeERR:
		return NameError
	case CodeGetSettings:
		return NameGetSettings
	case CodeGetGestures:
		return NameGetGestures
	case CodeGetTelemetry:
		if req == CodeGetMioPatterns {
			return NameGetMioPatterns
		}
		return NameGetTelemetry
	}
	return ""
}
