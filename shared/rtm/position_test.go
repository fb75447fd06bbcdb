package rtm_test

import (
	"errors"
	"math"
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

func TestParsePosition(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want rtm.Position
	}{
		{"zero", "0:0", rtm.Position{}},
		{"typical", "1700000000:42", rtm.Position{Epoch: 1700000000, Offset: 42}},
		{"largest", "18446744073709551615:18446744073709551615", rtm.Position{Epoch: math.MaxUint64, Offset: math.MaxUint64}},
		{"leading zeros", "007:010", rtm.Position{Epoch: 7, Offset: 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rtm.ParsePosition(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("ParsePosition(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
			got, err = rtm.ParsePositionBytes([]byte(tc.in))
			if err != nil || got != tc.want {
				t.Fatalf("ParsePositionBytes(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestParsePositionRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", ":", "1:", ":1", "1", "a:1", "1:a", "+1:2", "1:+2", "-1:2", "1:-2", "1:2:3", "1::2",
		" 1:2", "1:2 ", "1 :2", "0x1:2", "1.0:2", "1e3:2", "١:٢",
		"18446744073709551616:1", "1:18446744073709551616", "99999999999999999999:1",
		"000000000000000000001:1",
	} {
		t.Run(in, func(t *testing.T) {
			p, err := rtm.ParsePosition(in)
			if !errors.Is(err, rtm.ErrPositionFormat) || p != (rtm.Position{}) {
				t.Fatalf("ParsePosition(%q) = %+v, %v; want ErrPositionFormat", in, p, err)
			}
			p, err = rtm.ParsePositionBytes([]byte(in))
			if !errors.Is(err, rtm.ErrPositionFormat) || p != (rtm.Position{}) {
				t.Fatalf("ParsePositionBytes(%q) = %+v, %v; want ErrPositionFormat", in, p, err)
			}
		})
	}
}

// positionSink keeps String's result alive, as a caller's would be.
var positionSink string

func TestPositionText(t *testing.T) { // not parallel: it counts allocations
	for _, p := range []rtm.Position{{}, {Epoch: 1, Offset: 2}, {Epoch: math.MaxUint64, Offset: math.MaxUint64}, {Epoch: 10, Offset: 0}} {
		s := p.String()
		back, err := rtm.ParsePosition(s)
		if err != nil || back != p {
			t.Fatalf("%+v → %q → %+v, %v", p, s, back, err)
		}
		if got := string(p.AppendText([]byte("at "))); got != "at "+s {
			t.Fatalf("AppendText = %q, want %q", got, "at "+s)
		}
	}
	if got := (rtm.Position{Epoch: 3, Offset: 9}).String(); got != "3:9" {
		t.Fatalf("String = %q, want 3:9", got)
	}
	buf := make([]byte, 0, 64)
	p := rtm.Position{Epoch: math.MaxUint64, Offset: 1}
	if n := testing.AllocsPerRun(100, func() { buf = p.AppendText(buf[:0]) }); n != 0 {
		t.Fatalf("AppendText allocates %v times, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { positionSink = p.String() }); n > 1 {
		t.Fatalf("String allocates %v times, want 1 (the string)", n)
	}
}

func TestPositionCompare(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		p, q rtm.Position
		want int
	}{
		{"equal", rtm.Position{Epoch: 1, Offset: 5}, rtm.Position{Epoch: 1, Offset: 5}, 0},
		{"earlier offset", rtm.Position{Epoch: 1, Offset: 4}, rtm.Position{Epoch: 1, Offset: 5}, -1},
		{"later offset", rtm.Position{Epoch: 1, Offset: 6}, rtm.Position{Epoch: 1, Offset: 5}, 1},
		{"earlier epoch wins over offset", rtm.Position{Epoch: 1, Offset: 99}, rtm.Position{Epoch: 2, Offset: 0}, -1},
		{"later epoch", rtm.Position{Epoch: 3}, rtm.Position{Epoch: 2, Offset: math.MaxUint64}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Compare(tc.q); got != tc.want {
				t.Fatalf("%v.Compare(%v) = %d, want %d", tc.p, tc.q, got, tc.want)
			}
			if got := tc.q.Compare(tc.p); got != -tc.want {
				t.Fatalf("%v.Compare(%v) = %d, want %d", tc.q, tc.p, got, -tc.want)
			}
		})
	}
	if n := (rtm.Position{Epoch: 4, Offset: 7}).Next(); n != (rtm.Position{Epoch: 4, Offset: 8}) {
		t.Fatalf("Next = %v, want 4:8", n)
	}
}
