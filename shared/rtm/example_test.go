package rtm_test

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/shared/rtm"
)

// A position's text form, as replies carry it, and back.
func ExampleParsePosition() {
	p, err := rtm.ParsePosition("1732912345:42")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Epoch, p.Offset)
	p.Offset++
	fmt.Println(p)
	_, err = rtm.ParsePosition("42")
	fmt.Println(errors.Is(err, rtm.ErrPositionFormat))
	// Output:
	// 1732912345 42
	// 1732912345:43
	// true
}

// An edge's refusal reaches Go code as an *Error somewhere in the chain
// of wrapped errors; AsError finds it, and its Code says what happened.
func ExampleAsError() {
	err := fmt.Errorf("publish to %q: %w", "chat", &rtm.Error{Code: rtm.CodeAuthorizationDenied, Reason: "no publish permission"})
	if e, ok := rtm.AsError(err); ok {
		fmt.Println(e.Code, "-", e.Reason)
	}
	_, ok := rtm.AsError(errors.New("connection reset"))
	fmt.Println(ok)
	// Output:
	// authorization_denied - no publish permission
	// false
}

// Channel names are checked before a request goes out: 1 to 256 bytes of
// UTF-8 without control characters. Names starting with '$' are valid but
// reserved for the edge's own channels.
func ExampleValidateChannel() {
	for _, name := range []string{"chat", "", "a\nb", "$sys.stats"} {
		fmt.Printf("%q: %v, reserved %v\n", name, rtm.ValidateChannel(name), rtm.IsReserved(name))
	}
	fmt.Println(errors.Is(rtm.ValidateChannel(""), rtm.ErrChannelEmpty))
	// Output:
	// "chat": <nil>, reserved false
	// "": rtm: channel name is empty, reserved false
	// "a\nb": rtm: channel name contains a control character, reserved false
	// "$sys.stats": <nil>, reserved true
	// true
}
