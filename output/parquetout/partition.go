package parquetout

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
)

// Partitions named by the wire.
//
// A declared type's table is a name from the code: the registry bounds
// how many there are and how long they are. A protocol's "*" declaration
// (VRPN's application types) and a record no declaration matches take the
// record's own type as the partition, a name the sender chooses: as many
// as it likes (a 625 KB capture describes 82 k of them) and as long as a
// message allows. Two bounds follow.
//
// At most Options.MaxPartitions such partitions are made in a run
// (default [DefaultMaxPartitions]). The records of further types go to
// one overflow partition per protocol and declaration,
//
//	proto=P/type=__overflow__             the "*" declaration's records
//	proto=P/type=__overflow_undeclared__  records no declaration matches
//
// whose files have a record_type column with each record's real type,
// and [Writer.Overflowed] counts them. A type the wire names
// "__overflow__" gets its own partition while there is room, in the same
// directory, its files without record_type: coalesce(record_type, type)
// is every row's real type in either case (docs/scale.md).
//
// A partition name whose escaped form makes a directory name ("type=" and
// the escaped name) longer than [maxName] bytes, the file-name limit of
// Linux's and macOS's file systems, is shortened to a prefix of the
// escaped name, cut neither inside a %XX escape nor inside a UTF-8
// sequence, followed by "~" and the first 32 hex digits of the SHA-256
// of the full name; the files of that partition have a record_type
// column with the full type, and [Writer.Shortened] counts such
// partitions. Part file names (part-RUN-SEQ.parquet.inprogress) are
// under 100 bytes, whatever the types.

// DefaultMaxPartitions is the default bound on the partitions named by
// the wire in a run. Real VRPN servers describe a few dozen types (a
// tracker, its buttons and analogs: under 50 in every capture we have
// seen); 1024 leaves room for 20 times that, while a run makes at most
// 1024 directories and, with parts closed as they are evicted, a lake
// whose directory listing stays quick for DuckDB and Spark. Each such
// partition costs the writer at most about a kilobyte while it is not
// open (its key, directory and part count), 1 MB for all of them.
const DefaultMaxPartitions = 1024

// maxName is the longest file or directory name the lake makes, in bytes
// (NAME_MAX of ext4, XFS, Btrfs; APFS counts 255 UTF-8 characters, at
// least as many bytes).
const maxName = 255

// The names of the overflow partitions, of the column that holds a
// record's real type where the partition does not say it, and of the
// column of its bytes (Options.Raw).
const (
	overflowType           = "__overflow__"
	overflowUndeclaredType = "__overflow_undeclared__"
	typeColumn             = "record_type"
	rawColumn              = "raw"
)

// hashDigits is how many hex digits of the SHA-256 a shortened name keeps
// (128 bits: no two names the wire can make meet by chance).
const hashDigits = 32

// wireNamed says whether the partition of a record that matches d is
// named by the record's type, which the wire chooses.
func wireNamed(d *dissect.TypeDecl) bool { return d == nil || d.Type == "*" }

// keyType is the type a table is known by in the writer: the type itself,
// or a digest of it when it is too long for a partition's name, so that
// the writer keeps at most a few hundred bytes per table whatever the
// types' length. long says which.
func keyType(typ string) (key string, long bool) {
	if len("type=")+escapedLen(typ) <= maxName {
		return typ, false
	}
	sum := sha256.Sum256([]byte(typ))
	return string(sum[:]), true
}

// escapedLen is len(EscapePartition(s)) without building it.
func escapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if escaped(s[i]) {
			n += 2
		}
	}
	return n
}

func escaped(c byte) bool {
	return c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?[\\]^{", c) >= 0
}

// dirName returns the directory name key=value for a partition value,
// shortened when it would pass maxName; short says whether it was.
func dirName(key, value string) (name string, short bool) {
	esc := EscapePartition(value)
	if len(key)+1+len(esc) <= maxName {
		return key + "=" + esc, false
	}
	sum := sha256.Sum256([]byte(value))
	suffix := "~" + hex.EncodeToString(sum[:])[:hashDigits]
	return key + "=" + cutEscaped(esc, maxName-len(key)-1-len(suffix)) + suffix, true
}

// cutEscaped returns the longest prefix of the escaped esc of at most n
// bytes that ends neither inside a %XX escape nor inside a UTF-8
// sequence. In esc, '%' only starts an escape.
func cutEscaped(esc string, n int) string {
	if len(esc) <= n {
		return esc
	}
	i := n
	if j := strings.LastIndexByte(esc[max(i-2, 0):i], '%'); j >= 0 {
		i = max(i-2, 0) + j
	}
	for k := 0; k < utf8.UTFMax && i > 0 && !utf8.RuneStart(esc[i]); k++ {
		i--
	}
	return esc[:i]
}

// EscapePartition escapes a Hive partition value as Hive and Spark do
// (ExternalCatalogUtils.escapePathName): control characters, DEL and
// " # % ' * / : = ? [ \ ] ^ { become %XX.
func EscapePartition(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if escaped(c) {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
