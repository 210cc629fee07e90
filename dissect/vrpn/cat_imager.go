package vrpn

// imagerDefs lists the catalogued types of mainline's vrpn_Imager.C (none yet).
func imagerDefs() []msgDef { return nil }
