package vrpn

// poserSamples are the test messages of cat_poser.go's types (none yet).
func poserSamples() []sample { return nil }
