package e2e

import (
	"strings"
	"testing"
)

// TestTabNamesItself: two tabs on the same page (alice's and bob's chat)
// are told apart in failure messages, which name the user and the page.
func TestTabNamesItself(t *testing.T) {
	t.Parallel()
	page := "http://127.0.0.1:1/chat.html#room"
	alice := &tab{base: "http://127.0.0.1:1/", url: page, name: "alice"}
	bob := &tab{base: "http://127.0.0.1:1/", url: page, name: "bob"}
	if alice.String() == bob.String() {
		t.Fatalf("both tabs read %q in failure messages", alice)
	}
	for _, p := range []*tab{alice, bob} {
		if s := p.String(); !strings.Contains(s, p.name) || !strings.Contains(s, page) {
			t.Errorf("tab reads %q, want its user %q and its page %q", s, p.name, page)
		}
	}
	if anon := (&tab{url: page}); anon.String() != page {
		t.Errorf("a tab of no one reads %q, want the page %q", anon, page)
	}
}
