package loadgen

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrIntegrity is wrapped by Result.Check's errors.
var ErrIntegrity = errors.New("loadgen: the subscribers did not get every message once and in order")

// tolerated are the error kinds that do not fail a soak: the lost
// connections its own kills cause (the clients resume by position, and
// any message that costs shows as lost), and trouble sampling the
// server, which is the generator's view of it, not its behaviour.
var tolerated = []string{ProblemDisconnected, "probe", "metrics", "open files"}

// Check returns an error wrapping ErrIntegrity when a message was lost,
// duplicated, reordered or altered on its way to a subscriber; for a soak, also
// when anything else went wrong: a publish refused or unacknowledged, a
// publisher stalled, a subscription refused or ended. Nil means the run
// kept the promise: every message acknowledged to a publisher reached
// every subscriber of its channel exactly once and in order.
func (res *Result) Check() error {
	var faults []string
	if res.Lost+res.Duplicates+res.Reordered > 0 {
		faults = append(faults, fmt.Sprintf("lost %d, duplicated %d, reordered %d of %d owed",
			res.Lost, res.Duplicates, res.Reordered, res.Expected))
	}
	if e, ok := res.Errors[ProblemCorrupt]; ok {
		faults = append(faults, fmt.Sprintf("%d messages altered (first: %s)", e.Count, e.First))
	}
	if res.Config.Scenario == Soak {
		kinds := make([]string, 0, len(res.Errors))
		for k := range res.Errors {
			if !slices.Contains(tolerated, k) && k != ProblemCorrupt { // corrupt: above
				kinds = append(kinds, k)
			}
		}
		slices.Sort(kinds)
		for _, k := range kinds {
			faults = append(faults, fmt.Sprintf("%d %s errors (first: %s)", res.Errors[k].Count, k, res.Errors[k].First))
		}
	}
	if len(faults) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrIntegrity, strings.Join(faults, "; "))
}
