package view

import (
	"slices"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

// add takes the current message of e into the aggregate s.
func (c *acc) add(e *Evaluator, s aggSpec) {
	switch s.fn {
	case aggCount:
		if s.arg.op == opStar || e.eval(s.arg).k != kNull {
			c.n++
		}
	case aggSum, aggAvg:
		c.addNumber(e.eval(s.arg))
	case aggMin, aggMax:
		x := e.eval(s.arg)
		if rank(x) == 0 {
			return
		}
		if c.has {
			cmp := compareRank(x, decode(c.val))
			if s.fn == aggMin && cmp >= 0 || s.fn == aggMax && cmp <= 0 {
				return
			}
		}
		c.set(x)
	case aggFirst:
		if !c.has {
			c.set(e.eval(s.arg))
		}
	case aggLast:
		c.set(e.eval(s.arg))
	case aggMerge:
		c.merge(e.msg)
	}
}

func (c *acc) set(x value) {
	c.val = appendValue(c.val[:0], x)
	c.has = true
}

// addNumber adds x to a sum that stays an exact integer while it can.
// What is not a number is left out, as SQL leaves out nulls.
func (c *acc) addNumber(x value) {
	if !x.numeric() {
		return
	}
	c.n++
	if !c.float && x.k == kInt {
		if s, ok := intArith(opAdd, c.isum, x.i); ok {
			c.isum = s.i
			return
		}
	}
	if !c.float {
		c.float, c.fsum = true, float64(c.isum)
	}
	c.fsum += x.float()
}

// maxMergeFields bounds the fields a MERGE(*) keeps per group, as
// MaxGroups bounds the groups: a field first seen past it is left out.
const maxMergeFields = 1024

// merge notes the last value of every top-level field of msg, which
// Match has checked is a valid map.
func (c *acc) merge(msg []byte) {
	if c.fields == nil {
		c.fields = map[string]*[]byte{}
	}
	_, n, i, err := wire.Head(msg, 0)
	var sc wire.Scanner
	for ; err == nil && n > 0; n-- {
		key, next, ok := readKey(msg, i)
		if !ok {
			return
		}
		end, err := sc.Skip(msg, next, 1)
		if err != nil {
			return
		}
		i = end
		if !utf8.Valid(key) {
			continue // a binary key no codec could send as a string
		}
		if b, ok := c.fields[string(key)]; ok {
			*b = append((*b)[:0], msg[next:end]...)
		} else if len(c.fields) < maxMergeFields {
			b := slices.Clone(msg[next:end])
			c.fields[string(key)] = &b
		}
	}
}

// result is the aggregate's value at the end of the period; a MERGE's
// map is built in buf.
func (c *acc) result(fn aggFn, buf *[]byte) value {
	switch fn {
	case aggCount:
		return intValue(c.n)
	case aggSum, aggAvg:
		switch {
		case c.n == 0:
			return value{} // as SQL: the sum of nothing is null
		case fn == aggAvg && c.float:
			return floatValue(c.fsum / float64(c.n))
		case fn == aggAvg:
			return floatValue(float64(c.isum) / float64(c.n))
		case c.float:
			return floatValue(c.fsum)
		}
		return intValue(c.isum)
	case aggMerge:
		keys := make([]string, 0, len(c.fields))
		for k := range c.fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		start := len(*buf)
		*buf = wire.AppendMapHead(*buf, len(keys))
		for _, k := range keys {
			*buf = append(wire.AppendString(*buf, k), *c.fields[k]...)
		}
		return value{k: kMap, i: int64(len(keys)), b: (*buf)[start:]}
	}
	if !c.has {
		return value{}
	}
	return decode(c.val)
}

// rank orders the kinds for MIN and MAX, which take values of any
// kind: booleans, then numbers, then strings, then binary. Null, arrays
// and maps (rank 0) are left out.
func rank(x value) int {
	switch x.k {
	case kBool:
		return 1
	case kInt, kFloat:
		return 2
	case kString:
		return 3
	case kBinary:
		return 4
	}
	return 0
}

func compareRank(a, b value) int {
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	c, _, _ := compare(&a, &b)
	return c
}
