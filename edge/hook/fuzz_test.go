package hook

import (
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzDecodeConnect feeds the connect hook's answer decoder arbitrary
// backend bodies: it never panics, and what it accepts is within bounds.
func FuzzDecodeConnect(f *testing.F) {
	for _, s := range []string{
		`{"allow":true,"user":"alice","role":"admin","info":{"name":"Alice"}}`,
		`{"allow":false,"reason":"banned"}`,
		`{"allow":true,"permissions":{"publish":["chat.*"],"subscribe":["*"]}}`,
		`{"allow":"yes"}`, `[]`, `null`, `{"allow":true,"info":null}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var a ConnectAnswer
		if err := decodeConnect(b, &a); err != nil {
			return
		}
		if len(a.User) > MaxUserBytes || len(a.Role) > MaxRoleBytes || len(a.Info) > MaxInfoBytes ||
			len(a.Reason) > MaxReasonBytes || !utf8.ValidString(a.Reason) {
			t.Fatalf("accepted out of bounds: %+v", a)
		}
		if a.Role != "" && a.Permissions != nil {
			t.Fatalf("accepted role and permissions: %+v", a)
		}
		if !a.Allow && (a.User != "" || a.Info != nil) {
			t.Fatalf("a denial carries a grant: %+v", a)
		}
	})
}

// FuzzDecodeAnswer does the same for subscribe and publish answers.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{`{"allow":true}`, `{"allow":true,"message":{"text":"***"}}`, `{"allow":false,"reason":"no"}`, `{}`, `1`} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, publish bool) {
		var a Answer
		if err := decodeAnswer(b, &a, publish); err != nil {
			return
		}
		if (!publish || !a.Allow) && a.Message != nil {
			t.Fatalf("a message kept where none applies: %+v", a)
		}
		if len(a.Reason) > MaxReasonBytes {
			t.Fatalf("reason of %d bytes", len(a.Reason))
		}
	})
}

// FuzzVerify: a signature header of any shape is refused or verified,
// never a panic; one that verifies is the one Sign makes.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	f.Add(Sign(testSecret, now, []byte("{}")), []byte("{}"))
	f.Add("t=1,v1=", []byte{})
	f.Add("t=x,v1=00,,", []byte("a"))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		if Verify(testSecret, header, body, now, 0) == nil && Verify("another-secret-of-16b", header, body, now, 0) == nil {
			t.Fatalf("header %q verifies under two secrets", header)
		}
	})
}
