package vrpn

// trackerSamples are the test messages of cat_tracker.go's types (none yet).
func trackerSamples() []sample { return nil }
