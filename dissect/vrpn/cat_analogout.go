package vrpn

// analogOutputDefs lists the catalogued types of mainline's vrpn_Analog_Output.C (none yet).
func analogOutputDefs() []msgDef { return nil }
