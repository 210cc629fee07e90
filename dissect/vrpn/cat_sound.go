package vrpn

// soundDefs lists the catalogued types of mainline's vrpn_Sound.C (none yet).
func soundDefs() []msgDef { return nil }
