//go:build !js

package client

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestReconnectBackoff: against an edge that is down the supervisor
// redials with delays that grow from MinBackoff, each within its ceiling
// (min*2^attempt, capped at MaxBackoff); once a connection has stayed up
// for MaxBackoff the delays start over from MinBackoff. In a synctest
// bubble, so the delays are measured on the fake clock, exactly, and
// cost no real time.
func TestReconnectBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const minB, maxB = 100 * time.Millisecond, time.Second
		e := newFakeEdge()
		_, fc := dialFake(t, e, Options{MinBackoff: minB, MaxBackoff: maxB})
		first := len(e.attempts())

		e.refuseNext(6)
		dropped := time.Now()
		fc.drop()
		fc = e.accept(t) // the seventh dial gets through
		at := e.attempts()[first:]
		if len(at) != 7 {
			t.Fatalf("%d dials after the drop, want 6 refused and 1 accepted", len(at))
		}
		ceilings := []time.Duration{100, 200, 400, 800, 1000, 1000, 1000}
		prev, waited := dropped, time.Duration(0)
		for i, a := range at {
			d, ceil := a.Sub(prev), ceilings[i]*time.Millisecond
			if d < 0 || d > ceil {
				t.Fatalf("dial %d came %v after the one before, want within [0, %v]", i+1, d, ceil)
			}
			prev, waited = a, waited+d
		}
		if waited == 0 {
			t.Fatal("every redial came at once: no backoff")
		}

		// Up for MaxBackoff: the next loss starts over from MinBackoff.
		time.Sleep(maxB)
		e.refuseNext(1)
		dropped = time.Now()
		fc.drop()
		e.accept(t)
		at = e.attempts()[first+7:]
		if len(at) != 2 {
			t.Fatalf("%d dials after the second drop, want 2", len(at))
		}
		if d := at[0].Sub(dropped); d > minB {
			t.Fatalf("first redial %v after a drop that followed %v up, want within MinBackoff %v", d, maxB, minB)
		}
		if d := at[1].Sub(at[0]); d > 2*minB {
			t.Fatalf("second redial %v after the first, want within %v", d, 2*minB)
		}
	})
}
