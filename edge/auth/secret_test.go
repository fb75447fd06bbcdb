package auth

import (
	"encoding/base64"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/shared/rtm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testApp is the demo app with an "admin" role reachable by role_secret.
func testApp() *app.App {
	a := app.Demo()
	a.Roles["admin"] = &app.Role{
		Name:        "admin",
		Secret:      "secret-key",
		Permissions: app.Permissions{Publish: []string{"*", "$*"}, Subscribe: []string{"*", "$*"}},
	}
	return a
}

// wantAuthError fails unless err is an *rtm.Error with that code, and
// returns its reason.
func wantAuthError(t *testing.T, err error, code rtm.Code) string {
	t.Helper()
	e, ok := rtm.AsError(err)
	if !ok {
		t.Fatalf("error %v (%T) is not an *rtm.Error", err, err)
	}
	if e.Code != code {
		t.Fatalf("error code %q, want %q (reason %q)", e.Code, code, e.Reason)
	}
	return e.Reason
}

func TestHashVector(t *testing.T) {
	t.Parallel()
	if got := Hash("secret-key", "nonce"); got != "G12A8Dt0RdjHNx8P0lci9w==" {
		t.Fatalf("Hash = %q, want the PROTOCOL.md vector", got)
	}
}

func TestNewNonce(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		n, err := NewNonce()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := base64.StdEncoding.DecodeString(n)
		if err != nil || len(raw) < 16 {
			t.Fatalf("nonce %q: %d bytes, %v", n, len(raw), err)
		}
		if seen[n] {
			t.Fatalf("nonce %q repeated", n)
		}
		seen[n] = true
	}
}

func TestHandshakeSuccess(t *testing.T) {
	t.Parallel()
	a := testApp()
	var h Handshake
	nonce, err := h.Begin("admin")
	if err != nil {
		t.Fatal(err)
	}
	if !h.Pending() {
		t.Fatal("no handshake pending after Begin")
	}
	role, err := h.Authenticate(a, Hash("secret-key", nonce))
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if role.Name != "admin" || !role.CanSubscribe("$sys.stats") {
		t.Fatalf("role = %+v", role)
	}
	if h.Pending() {
		t.Fatal("handshake still pending after Authenticate")
	}
}

func TestHandshakeFailures(t *testing.T) {
	t.Parallel()
	a := testApp()
	// Reference: the reason of a plain wrong hash.
	var ref Handshake
	if _, err := ref.Begin("admin"); err != nil {
		t.Fatal(err)
	}
	_, err := ref.Authenticate(a, Hash("wrong", "nonce"))
	wrongReason := wantAuthError(t, err, rtm.CodeAuthenticationFailed)

	tests := []struct {
		name string
		role string
		// hash computes the client's answer from the nonce.
		hash func(nonce string) string
	}{
		{name: "wrong secret", role: "admin", hash: func(n string) string { return Hash("secret-kez", n) }},
		{name: "hash of another nonce", role: "admin", hash: func(string) string { return Hash("secret-key", "nonce") }},
		{name: "empty hash", role: "admin", hash: func(string) string { return "" }},
		{name: "unknown role", role: "nobody", hash: func(n string) string { return Hash("secret-key", n) }},
		{name: "unknown role empty secret", role: "nobody", hash: func(n string) string { return Hash("", n) }},
		{name: "role without secret", role: app.DefaultRole, hash: func(n string) string { return Hash("", n) }},
		{name: "role without secret dummy", role: app.DefaultRole, hash: func(n string) string { return Hash(dummySecret, n) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var h Handshake
			nonce, err := h.Begin(tt.role)
			if err != nil {
				t.Fatal(err)
			}
			role, err := h.Authenticate(a, tt.hash(nonce))
			if role != nil {
				t.Fatalf("authenticated as %q", role.Name)
			}
			if reason := wantAuthError(t, err, rtm.CodeAuthenticationFailed); reason != wrongReason {
				t.Fatalf("reason %q differs from a wrong hash's %q", reason, wrongReason)
			}
		})
	}
}

func TestHandshakeNonceSingleUse(t *testing.T) {
	t.Parallel()
	a := testApp()
	tests := []struct {
		name  string
		first string // "good" or "bad": the first attempt
	}{
		{name: "after success", first: "good"},
		{name: "after failure", first: "bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var h Handshake
			nonce, err := h.Begin("admin")
			if err != nil {
				t.Fatal(err)
			}
			good := Hash("secret-key", nonce)
			first := good
			if tt.first == "bad" {
				first = Hash("bad", nonce)
			}
			_, _ = h.Authenticate(a, first)
			if _, err := h.Authenticate(a, good); err == nil {
				t.Fatal("a nonce was accepted twice")
			} else {
				wantAuthError(t, err, rtm.CodeAuthenticationFailed)
			}
		})
	}
}

func TestHandshakeRequired(t *testing.T) {
	t.Parallel()
	var h Handshake
	_, err := h.Authenticate(testApp(), Hash("secret-key", ""))
	wantAuthError(t, err, rtm.CodeAuthenticationFailed)
}

func TestHandshakeReplaced(t *testing.T) {
	t.Parallel()
	a := testApp()
	var h Handshake
	old, err := h.Begin("admin")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := h.Begin("admin")
	if err != nil {
		t.Fatal(err)
	}
	if old == fresh {
		t.Fatal("two handshakes got the same nonce")
	}
	if _, err := h.Authenticate(a, Hash("secret-key", old)); err == nil {
		t.Fatal("the replaced nonce was accepted")
	}
	fresh, err = h.Begin("admin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Authenticate(a, Hash("secret-key", fresh)); err != nil {
		t.Fatalf("the latest nonce was refused: %v", err)
	}
}

func BenchmarkAuthenticate(b *testing.B) {
	a := testApp()
	var h Handshake
	b.ReportAllocs()
	for b.Loop() {
		nonce, err := h.Begin("admin")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Authenticate(a, Hash("secret-key", nonce)); err != nil {
			b.Fatal(err)
		}
	}
}
