package e2e

import (
	"strings"
	"testing"
)

// TestBrowserCredentialOptions: credentials that do not go together are
// refused by connect naming its own options (role, secret, token), not
// the Go client's fields.
func TestBrowserCredentialOptions(t *testing.T) {
	e := startDemoEdge(t)
	b := startChrome(t)
	p := b.newTab(t, e.url)
	p.openHarness()
	for _, tc := range []struct {
		name string
		opts map[string]any
		want string
	}{
		{name: "role without secret", opts: map[string]any{"role": "admin"}, want: `the option role "admin" needs the option secret`},
		{name: "secret without role", opts: map[string]any{"secret": "s"}, want: "the option secret needs the option role"},
		{name: "token and role", opts: map[string]any{"role": "admin", "secret": "s", "token": "t"}, want: "the option token or the option role"},
	} {
		o := harnessCall[string](p, "connect", e.url, jsConnectOptions("demo", tc.opts))
		if o.OK || o.Error == nil || o.Error.Code != "invalid_options" || !strings.Contains(o.Error.Message, tc.want) {
			t.Errorf("%s: connect = %+v (error %+v), want invalid_options saying %q", tc.name, o, o.Error, tc.want)
		}
		if o.Error != nil && strings.Contains(o.Error.Message, "RoleSecret") {
			t.Errorf("%s: the message names a Go field: %q", tc.name, o.Error.Message)
		}
	}
}
