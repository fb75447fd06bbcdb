package tally

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/shared/rtm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRefuse counts each code under its own name, and a code the edge
// does not count by name under "other".
func TestRefuse(t *testing.T) {
	var c Counters
	c.Refuse(rtm.CodeTooManyRequests)
	c.Refuse(rtm.CodeTooManyRequests)
	c.Refuse(CodeTooManyConnections)
	c.Refuse("no_such_code")
	got := c.Refused()
	names := RefusalCodes()
	want := map[string]uint64{string(rtm.CodeTooManyRequests): 2, string(CodeTooManyConnections): 1, "other": 1}
	for i, n := range got {
		if n != want[names[i]] {
			t.Errorf("%s counted %d, want %d", names[i], n, want[names[i]])
		}
	}
}
