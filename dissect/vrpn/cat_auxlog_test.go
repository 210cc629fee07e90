package vrpn

// auxLoggerSamples are the test messages of cat_auxlog.go's types (none yet).
func auxLoggerSamples() []sample { return nil }
