package vrpn

// forceSamples are the test messages of cat_force.go's types (none yet).
func forceSamples() []sample { return nil }
