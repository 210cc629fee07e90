package vrpn

// buttonSamples are the test messages of cat_button.go's types (none yet).
func buttonSamples() []sample { return nil }
