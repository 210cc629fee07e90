package vrpn

// analogOutputSamples are the test messages of cat_analogout.go's types (none yet).
func analogOutputSamples() []sample { return nil }
