package vrpn

// soundSamples are the test messages of cat_sound.go's types (none yet).
func soundSamples() []sample { return nil }
