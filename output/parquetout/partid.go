package parquetout

import "fmt"

// MaxPartIDLen bounds Options.PartID, so that part names stay short
// (part-<id>-<seq>.parquet.inprogress under 100 bytes).
const MaxPartIDLen = 64

// ValidPartID reports why id cannot name a run's parts (nil when it can):
// it must be 1 to MaxPartIDLen ASCII letters, digits, '-' and '_', so
// that it stays inside its partition's directory and means the same on
// every file system and to every reader of the lake.
func ValidPartID(id string) error {
	if id == "" || len(id) > MaxPartIDLen {
		return fmt.Errorf("part id %q: want 1 to %d characters", id, MaxPartIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("part id %q: character %q at %d: want only letters, digits, '-' and '_'", id, c, i)
		}
	}
	return nil
}
