package filter

import (
	"fmt"
	"strconv"
	"strings"
)

// Qualifiers, as in pcap-filter(7): a protocol, a direction and an address
// type. A bare value after and/or takes the qualifiers of the primitive
// before it ("port 80 or 443"); after a primitive that has none (tcp,
// vlan...) a bare value is an error, as in tcpdump.
type (
	qproto uint8
	qdir   uint8
	qaddr  uint8
	qual   struct {
		ok    bool // false: no qualifiers to repeat (libpcap's qerr)
		proto qproto
		dir   qdir
		addr  qaddr
	}
)

const (
	qDefault qproto = iota
	qIP
	qIP6
	qARP
	qRARP
	qTCP
	qUDP
	qSCTP
	qICMP
	qICMP6
)

var protoNames = map[string]qproto{
	"ip": qIP, "ip6": qIP6, "arp": qARP, "rarp": qRARP, "tcp": qTCP,
	"udp": qUDP, "sctp": qSCTP, "icmp": qICMP, "icmp6": qICMP6,
}

func (q qproto) String() string {
	for name, v := range protoNames {
		if v == q {
			return name
		}
	}
	return "default"
}

const (
	qDirDefault qdir = iota
	qSrc
	qDst
	qOr  // src or dst
	qAnd // src and dst
)

const (
	qAddrDefault qaddr = iota
	qHost
	qNet
	qPort
	qPortrange
	qProto
)

var addrNames = map[string]qaddr{"host": qHost, "net": qNet, "port": qPort, "portrange": qPortrange}

func (q qual) addrWord() string {
	switch q.addr {
	case qNet:
		return "net"
	case qPort:
		return "port"
	case qPortrange:
		return "portrange"
	case qProto:
		return "proto"
	}
	return "host"
}

// unsupported are tcpdump keywords this compiler does not implement; they
// get a clearer error than an unknown word.
var unsupported = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`ether link ppp fddi tr wlan slip gateway less greater len length
		broadcast multicast igmp igrp pim vrrp carp atalk aarp decnet lat sca moprc mopdl iso esis
		es-is clnp isis is-is l1 l2 iih lsp snp csnp psnp stp ipx netbeui ah esp mpls pppoed pppoes
		geneve vxlan inbound outbound ifindex protochain llc radio type subtype dir addr1 addr2 addr3
		addr4 ra ta on ifname rnr rulenum reason rset ruleset srnr subrulenum action lane metac bcc
		sc ilmic oamf4ec oamf4sc oam oamf4 connectmsg metaconnect vpi vci fisu lssu msu hfisu
		hlssu hmsu sio opc dpc sls hsio hopc hdpc hsls batadv`) {
		unsupported[w] = true
	}
}

func isKeyword(w string) bool {
	if _, ok := protoNames[w]; ok {
		return true
	}
	if _, ok := addrNames[w]; ok {
		return true
	}
	switch w {
	case "src", "dst", "proto", "mask", "vlan":
		return true
	}
	return unsupported[w]
}

// parser is a recursive-descent parser for tcpdump's grammar that builds
// the boolean tree as it goes. As in libpcap, "vlan" changes the offsets
// used by every primitive after it in the text.
type parser struct {
	expr   string
	toks   []token
	i      int
	link   link
	socket bool

	off         offsets
	vlanDepth   int
	usesScratch bool
}

func (p *parser) peek() token        { return p.toks[p.i] }
func (p *parser) peekAt(n int) token { return p.toks[min(p.i+n, len(p.toks)-1)] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// errAt reports an error at t; at a tErr token, the lexical error is
// reported instead.
func (p *parser) errAt(t token, format string, args ...any) error {
	if t.kind == tErr {
		return &Error{Expr: p.expr, Pos: t.pos, Msg: t.text}
	}
	return &Error{Expr: p.expr, Pos: t.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) parse() (node, error) {
	n, _, err := p.parseExpr(qual{}, 0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		if t.kind == tRParen {
			return nil, p.errAt(t, "unbalanced \")\"")
		}
		return nil, p.unexpected(t, `expected "and", "or" or the end`)
	}
	return n, nil
}

// unexpected reports t where an operator was expected.
func (p *parser) unexpected(t token, want string) error {
	if t.kind == tWord {
		if unsupported[t.text] {
			return p.errAt(t, "%q is not supported", t.text)
		}
		if !isKeyword(t.text) {
			return p.errAt(t, "unknown primitive %q", t.text)
		}
	}
	return p.errAt(t, "%s, not %s", want, t.describe())
}

// parseExpr parses operands joined by and/or (equal precedence, left to
// right, as in tcpdump). q is the inherited qualifier; the returned one is
// that of the last operand.
func (p *parser) parseExpr(q qual, depth int) (node, qual, error) {
	n, q, err := p.parseOperand(q, depth)
	if err != nil {
		return nil, q, err
	}
	for {
		op := p.peek()
		if op.kind != tAnd && op.kind != tOr {
			return n, q, nil
		}
		p.next()
		m, q2, err := p.parseOperand(q, depth)
		if err != nil {
			return nil, q, err
		}
		if op.kind == tAnd {
			n = andNode{n, m}
		} else {
			n = orNode{n, m}
		}
		q = q2
	}
}

// parseOperand parses a negation, a parenthesized expression, a primitive
// or a bare value that repeats q.
func (p *parser) parseOperand(q qual, depth int) (node, qual, error) {
	t := p.peek()
	if depth > maxDepth {
		return nil, q, p.errAt(t, "parentheses and negations nested more than %d deep", maxDepth)
	}
	switch t.kind {
	case tNot:
		p.next()
		n, q2, err := p.parseOperand(q, depth+1)
		if err != nil {
			return nil, q, err
		}
		return notNode{n}, q2, nil
	case tLParen:
		p.next()
		n, _, err := p.parseExpr(q, depth+1)
		if err != nil {
			return nil, q, err
		}
		if c := p.peek(); c.kind != tRParen {
			return nil, q, p.unexpected(c, `expected "and", "or" or ")"`)
		}
		p.next()
		// As in libpcap, the qualifiers after a group are those before it.
		return n, q, nil
	case tNum, tHID, tHID6:
		if !q.ok {
			return nil, q, p.errAt(t, "%q needs a qualifier such as host, net, port or portrange", t.text)
		}
		n, err := p.value(q)
		return n, q, err
	case tWord:
		if pr, ok := protoNames[t.text]; ok {
			p.next()
			return p.head(pr, depth)
		}
		switch t.text {
		case "src", "dst", "host", "net", "port", "portrange", "proto":
			return p.head(qDefault, depth)
		case "vlan":
			p.next()
			vid, has := p.pnum()
			n, err := p.vlan(t, vid, has)
			return n, qual{}, err
		case "mask":
			return nil, q, p.errAt(t, "\"mask\" must follow an IPv4 network, as in \"net 10.0.0.0 mask 255.0.0.0\"")
		}
		if unsupported[t.text] {
			return nil, q, p.errAt(t, "%q is not supported", t.text)
		}
		if q.ok {
			n, err := p.value(q)
			return n, q, err
		}
		return nil, q, p.errAt(t, "unknown primitive %q", t.text)
	case tEOF:
		return nil, q, p.errAt(t, "the expression ends where a primitive is expected")
	}
	return nil, q, p.errAt(t, "expected a primitive, not %s", t.describe())
}

// pnum reads an optional number, possibly in parentheses ("vlan (10)").
func (p *parser) pnum() (uint32, bool) {
	n := 0
	for p.peekAt(n).kind == tLParen {
		n++
	}
	if p.peekAt(n).kind != tNum {
		return 0, false
	}
	for k := 1; k <= n; k++ {
		if p.peekAt(n+k).kind != tRParen {
			return 0, false
		}
	}
	v := p.peekAt(n).num
	p.i += 2*n + 1
	return v, true
}

// head parses the direction and address-type qualifiers after an optional
// protocol, then the value(s) they apply to. A protocol without further
// qualifiers is the protocol test itself.
func (p *parser) head(pr qproto, depth int) (node, qual, error) {
	q := qual{ok: true, proto: pr}
	qualified := false
	if t := p.peek(); t.kind == tWord && (t.text == "src" || t.text == "dst") {
		p.next()
		qualified = true
		other := "dst"
		q.dir = qSrc
		if t.text == "dst" {
			q.dir, other = qDst, "src"
		}
		if op := p.peek(); op.kind == tAnd || op.kind == tOr {
			w := p.peekAt(1)
			if w.kind != tWord || w.text != other {
				return nil, q, p.errAt(w, "expected %q after \"%s %s\"", other, t.text, op.text)
			}
			p.next()
			p.next()
			q.dir = qOr
			if op.kind == tAnd {
				q.dir = qAnd
			}
		}
	}
	if t := p.peek(); t.kind == tWord {
		if a, ok := addrNames[t.text]; ok {
			p.next()
			qualified = true
			q.addr = a
		} else if t.text == "proto" {
			if q.dir != qDirDefault {
				return nil, q, p.errAt(t, "\"proto\" takes no src or dst qualifier")
			}
			p.next()
			qualified = true
			q.addr = qProto
		}
	}
	if !qualified {
		return p.protoAbbrev(pr), qual{}, nil
	}
	n, err := p.id(q, depth)
	return n, q, err
}

// id parses what follows qualifiers: a value, "not" id, or a parenthesized
// group of values joined by and/or, all taking q ("port (80 or 443)").
func (p *parser) id(q qual, depth int) (node, error) {
	t := p.peek()
	if depth > maxDepth {
		return nil, p.errAt(t, "parentheses and negations nested more than %d deep", maxDepth)
	}
	switch t.kind {
	case tNot:
		p.next()
		n, err := p.id(q, depth+1)
		if err != nil {
			return nil, err
		}
		return notNode{n}, nil
	case tLParen:
		p.next()
		n, err := p.id(q, depth+1)
		if err != nil {
			return nil, err
		}
		for {
			op := p.peek()
			if op.kind != tAnd && op.kind != tOr {
				break
			}
			p.next()
			m, err := p.id(q, depth+1)
			if err != nil {
				return nil, err
			}
			if op.kind == tAnd {
				n = andNode{n, m}
			} else {
				n = orNode{n, m}
			}
		}
		if c := p.peek(); c.kind != tRParen {
			return nil, p.unexpected(c, `expected "and", "or" or ")"`)
		}
		p.next()
		return n, nil
	case tNum, tHID, tHID6:
		return p.value(q)
	case tWord:
		if !isKeyword(t.text) {
			return p.value(q)
		}
	}
	return nil, p.errAt(t, "expected %s value, not %s", q.addrWord(), t.describe())
}

// value parses one value (with a "/len" or "mask M" suffix) and builds the
// primitive for q.
func (p *parser) value(q qual) (node, error) {
	t := p.next()
	switch t.kind {
	case tHID, tNum:
		if s := p.peek(); s.kind == tSlash || s.kind == tWord && s.text == "mask" {
			p.next()
			m := p.next()
			if t.kind != tHID {
				return nil, p.errAt(t, "write the network in dotted form, e.g. \"net 10.0.0.0/8\"")
			}
			if err := p.checkAddrQual(t, q); err != nil {
				return nil, err
			}
			if s.kind == tSlash {
				if m.kind != tNum {
					return nil, p.errAt(m, "expected a prefix length after \"/\", not %s", m.describe())
				}
				return p.netMask(t, q, t.text, m.num, nil)
			}
			if m.kind != tHID {
				return nil, p.errAt(m, "expected a dotted netmask after \"mask\", not %s", m.describe())
			}
			return p.netMask(t, q, t.text, 0, &m)
		}
		switch q.addr {
		case qPort, qPortrange:
			if t.kind == tHID {
				return nil, p.errAt(t, "'%s' modifier applied to an IPv4 address", q.addrWord())
			}
			if t.num > 65535 {
				return nil, p.errAt(t, "port number %d is greater than 65535", t.num)
			}
			return p.port(t, q, t.num, t.num)
		case qProto:
			if t.kind == tHID {
				return nil, p.errAt(t, "'proto' modifier applied to an IPv4 address")
			}
			return p.proto(t, q, t.num)
		}
		return p.hostValue(t, q)
	case tHID6:
		masklen := uint32(128)
		if p.peek().kind == tSlash {
			p.next()
			m := p.next()
			if m.kind != tNum {
				return nil, p.errAt(m, "expected a prefix length after \"/\", not %s", m.describe())
			}
			masklen = m.num
		}
		if err := p.checkAddrQual(t, q); err != nil {
			return nil, err
		}
		return p.net6(t, q, masklen)
	}
	// A name.
	switch q.addr {
	case qPortrange:
		lo, hi, ok := parseRange(t.text)
		if !ok {
			return nil, p.errAt(t, "invalid port range %q: write it as LOW-HIGH, with numbers up to 65535", t.text)
		}
		return p.port(t, q, lo, hi)
	case qPort:
		if _, _, ok := parseRange(t.text); ok {
			return nil, p.errAt(t, "%q is a range: use \"portrange %s\"", t.text, t.text)
		}
		return nil, p.errAt(t, "port names are not resolved: use a number, not %q", t.text)
	case qProto:
		return nil, p.errAt(t, "protocol names are not resolved: use a number, not %q", t.text)
	}
	return nil, p.errAt(t, "host names are not resolved: use an address, not %q", t.text)
}

// checkAddrQual refuses an address under a port, portrange or proto
// qualifier.
func (p *parser) checkAddrQual(t token, q qual) error {
	switch q.addr {
	case qPort, qPortrange, qProto:
		return p.errAt(t, "'%s' modifier applied to an address", q.addrWord())
	}
	return nil
}

// parseRange reads "LOW-HIGH" (decimal, at most 65535), swapping the ends
// when LOW > HIGH, as libpcap does.
func parseRange(s string) (lo, hi uint32, ok bool) {
	a, b, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(a, 10, 16)
	y, err2 := strconv.ParseUint(b, 10, 16)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	if x > y {
		x, y = y, x
	}
	return uint32(x), uint32(y), true
}
