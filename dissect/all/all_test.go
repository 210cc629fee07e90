package all

import "testing"

// TestRegistry checks that the list builds into a registry: no decode-as
// name and no default port is claimed twice.
func TestRegistry(t *testing.T) {
	reg, err := Registry(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vrpn", "deltarobot", "handcontrol", "neptune", "neptune-wiki", "roboid"} {
		if reg.Lookup(name) == nil {
			t.Errorf("%s is not registered", name)
		}
	}
}
