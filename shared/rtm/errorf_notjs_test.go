//go:build !js

package rtm_test

import (
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

func TestErrorf(t *testing.T) {
	t.Parallel()
	e := rtm.Errorf(rtm.CodeExpiredPosition, "position %s has expired", "1:2")
	if e.Code != rtm.CodeExpiredPosition || e.Reason != "position 1:2 has expired" {
		t.Fatalf("Errorf = %+v", e)
	}
}
