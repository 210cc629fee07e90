package vrpn

// imagerSamples are the test messages of cat_imager.go's types (none yet).
func imagerSamples() []sample { return nil }
