package vrpn

// poserDefs lists the catalogued types of mainline's vrpn_Poser.C (none yet).
func poserDefs() []msgDef { return nil }
