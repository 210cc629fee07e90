package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/dissect/handcontrol"
	"github.com/dissect-tools/dissect/dissect/spec"
)

// protoFlags are the flags that change what protocols decode, and so
// their declarations.
type protoFlags struct {
	neptuneInt16 bool
	protoPaths   []string
	protoFiles   []string
	hcRaw        bool
	described    []string // --protocol FILE
}

func (o *protoFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.neptuneInt16, "neptune-int16", false, "neptune-wiki: read the wiki's \"int\" fields as int16 (AVR layout) instead of int32")
	f.StringArrayVar(&o.protoFiles, "proto", nil, "handcontrol: decode payloads with this .proto file (messages replace the built-in ones by name; see docs/handcontrol.md); may be repeated")
	f.StringArrayVar(&o.protoPaths, "proto-path", nil, "handcontrol: directory to resolve --proto imports from; may be repeated")
	f.BoolVar(&o.hcRaw, "handcontrol-raw", false, "handcontrol: show payloads as raw protobuf wire fields (like protoc --decode_raw), without a schema")
	f.StringArrayVar(&o.described, "protocol", nil, "decode a protocol of your own, described in this file (docs/your-protocol.md); may be repeated. The files in $XDG_CONFIG_HOME/dissect/protocols (else ~/.config/dissect/protocols) are always loaded")
}

// options returns the protocol preferences the flags give.
func (o *protoFlags) options() all.Options {
	return all.Options{
		NeptuneInt16:  o.neptuneInt16,
		HandControl:   handcontrol.Options{ProtoPaths: o.protoPaths, ProtoFiles: o.protoFiles, Raw: o.hcRaw},
		ProtocolFiles: o.described,
		ProtocolDirs:  userDirs(),
	}
}

// writeSchema writes the --schema lines: the events any stream carries
// (proto "*"), then each proto key's types in declaration order, the
// variants of a type on one line. only, when not "", keeps one protocol
// (decode-as name or proto key) besides the events.
func writeSchema(w io.Writer, reg *dissect.Registry, only string) error {
	protos := reg.Protos()
	if only != "" {
		key := ""
		for _, p := range reg.Protocols() {
			if in := p.Info(); in.Name == only || in.Proto == only {
				key = in.Proto
			}
		}
		if key == "" {
			return usageError{fmt.Errorf("--schema %q: unknown protocol (known: %s)", only, strings.Join(reg.Names(), ", "))}
		}
		protos = []string{key}
	}
	bw := bufio.NewWriter(w)
	var b []byte
	for _, proto := range append([]string{"*"}, protos...) {
		types := reg.Types(proto)
		for i, t := range types {
			if i > 0 && sameType(types[:i], t.Type) {
				continue // a variant, on its type's line
			}
			var group []*dissect.TypeDecl
			for _, u := range types[i:] {
				if u.Type == t.Type {
					group = append(group, u)
				}
			}
			b = dissect.AppendSchemaLine(b[:0], proto, t.Type, group)
			if _, err := bw.Write(b); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

func sameType(ts []*dissect.TypeDecl, typ string) bool {
	for _, t := range ts {
		if t.Type == typ {
			return true
		}
	}
	return false
}

// userDirs is the user's protocols directory, if the system names one.
func userDirs() []string {
	if d := spec.UserDir(); d != "" {
		return []string{d}
	}
	return nil
}
