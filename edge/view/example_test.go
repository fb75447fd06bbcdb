package view_test

import (
	"fmt"

	"github.com/sluicehq/sluice/edge/view"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

// The edge compiles a subscription's filter once, evaluates it once per
// message for all its subscribers and sends the result.
func ExampleView_Append() {
	v, err := view.Compile("select who, speed * 2 as fast from `animals` where speed > 10")
	if err != nil {
		fmt.Println(err)
		return
	}
	var buf []byte
	for _, m := range []map[string]any{{"who": "zebra", "speed": int64(20)}, {"who": "snail", "speed": 0.01}} {
		msg, _ := wire.AppendValue(nil, m)
		out, ok := v.Append(buf[:0], msg)
		if !ok {
			fmt.Println("dropped")
			continue
		}
		d := wire.NewDecoder(out)
		r, _ := d.Value(0)
		fmt.Println(v.Channel(), r)
	}
	// Output:
	// animals map[fast:40 who:zebra]
	// dropped
}

// An aggregate view gives one message per group at the end of each
// period, when the edge calls Flush.
func ExampleAggregate() {
	v, _ := view.Compile("SELECT count(*) AS count, who FROM `animals` GROUP BY who")
	a := v.NewAggregate()
	for _, who := range []string{"zebra", "lion", "zebra"} {
		msg, _ := wire.AppendValue(nil, map[string]any{"who": who})
		a.Add(msg)
	}
	for _, out := range a.Flush(nil) {
		d := wire.NewDecoder(out)
		r, _ := d.Value(0)
		fmt.Println(r)
	}
	fmt.Println(len(a.Flush(nil)), "messages in a period without input")
	// Output:
	// map[count:2 who:zebra]
	// map[count:1 who:lion]
	// 0 messages in a period without input
}

// A bad statement names its fault and column, for invalid_filter.
func ExampleError() {
	_, err := view.Compile("SELECT * FORM animals")
	if e, ok := view.AsError(err); ok {
		fmt.Println(e.Column, e.Reason)
	}
	// Output:
	// 10 unexpected "FORM", expected FROM
}
