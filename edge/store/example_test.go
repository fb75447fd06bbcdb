package store_test

import (
	"fmt"

	"github.com/sluicehq/sluice/edge/store"
)

// A writer appends to a channel; a cursor that subscribed with history
// reads the last messages and then what is appended after; Read looks one
// message up without subscribing. Offsets count from 1 in each channel.
func Example() {
	s := store.New(nil) // the defaults: a single edge's limits and retention
	defer s.Close()
	for _, m := range []string{"a", "b", "c"} {
		if _, err := s.Append("chat", []byte(m)); err != nil {
			panic(err)
		}
	}
	cur, err := s.Subscribe("chat", store.Start{HistoryCount: 2})
	if err != nil {
		panic(err)
	}
	defer cur.Close()
	if _, err := s.Append("chat", []byte("d")); err != nil {
		panic(err)
	}
	frames, err := cur.Read(nil, 64<<10)
	if err != nil {
		panic(err)
	}
	for _, f := range frames {
		fmt.Println(f.Offset, string(f.Data))
	}
	f, found, err := s.Read("chat", nil) // the newest
	fmt.Println(found, f.Offset, string(f.Data), err)
	// Output:
	// 2 b
	// 3 c
	// 4 d
	// true 4 d <nil>
}
