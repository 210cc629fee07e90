package vrpn

// trackerDefs lists the catalogued types of mainline's vrpn_Tracker.C (none yet).
func trackerDefs() []msgDef { return nil }
