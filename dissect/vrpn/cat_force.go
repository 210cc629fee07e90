package vrpn

// forceDefs lists the catalogued types of mainline's vrpn_ForceDevice.C (none yet).
func forceDefs() []msgDef { return nil }
