package vrpn

// buttonDefs lists the catalogued types of mainline's vrpn_Button.C (none yet).
func buttonDefs() []msgDef { return nil }
