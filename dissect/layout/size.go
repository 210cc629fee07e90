package layout

// MinSize returns the least bytes a value of type t takes: the size of a
// type whose fields are all of fixed size.
func (p *Plan) MinSize(t int) int64 { return p.types[t].minSize }
