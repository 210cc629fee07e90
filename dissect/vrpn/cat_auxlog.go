package vrpn

// auxLoggerDefs lists the catalogued types of mainline's vrpn_Auxiliary_Logger.C (none yet).
func auxLoggerDefs() []msgDef { return nil }
