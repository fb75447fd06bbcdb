package stream

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestField(t *testing.T) {
	t.Parallel()
	pdu := []byte(`{"action":"rtm/subscription/data", "body" : {"subscription_id":"a\"b","position":"1:2","messages":[{"x":[1,"]"]},null, "s" ,-1.5e3]}}`)
	body := field(pdu, "body")
	if got := text(field(pdu, "action")); got != "rtm/subscription/data" {
		t.Errorf("action %q", got)
	}
	if got := text(field(body, "subscription_id")); got != `a"b` {
		t.Errorf("subscription_id %q", got)
	}
	var msgs []string
	elements(field(body, "messages"), func(m []byte) { msgs = append(msgs, string(m)) })
	if want := []string{`{"x":[1,"]"]}`, `null`, `"s"`, `-1.5e3`}; strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("messages %q, want %q", msgs, want)
	}
	if field(pdu, "nope") != nil || field([]byte(`[1]`), "a") != nil || field([]byte(`{"a":`), "a") != nil {
		t.Error("a missing field or a broken object gave a value")
	}
}

// FuzzField checks the scanner against encoding/json: in a valid object,
// each key's value is found, and is valid JSON; on anything, it never
// panics or reads past its input.
func FuzzField(f *testing.F) {
	f.Add([]byte(`{"action":"rtm/publish/ok","id":1,"body":{"position":"1:2"}}`), "body")
	f.Add([]byte(`{"a":[{"b":"}"},"\\\""],"c":true}`), "c")
	f.Fuzz(func(t *testing.T, obj []byte, key string) {
		v := field(obj, key)
		var m map[string]json.RawMessage
		if json.Unmarshal(obj, &m) != nil {
			return
		}
		want, ok := m[key]
		if !ok || bytes.Count(obj, []byte(`"`+key+`"`)) != 1 || !utf8.ValidString(key) || strings.ContainsAny(key, "\\\"") {
			return // absent, repeated, or named with escapes: not what the PDUs hold
		}
		if !json.Valid(v) || !bytes.Equal(compact(t, v), compact(t, want)) {
			t.Fatalf("field %q of %s: %q, want %q", key, obj, v, want)
		}
		elements(v, func(e []byte) {
			if !json.Valid(e) {
				t.Fatalf("element %q of %q is not JSON", e, v)
			}
		})
	})
}

func compact(t *testing.T, b []byte) []byte {
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		t.Fatal(err)
	}
	return c.Bytes()
}

// FuzzAppendString checks that a string written as JSON reads back the
// same as encoding/json's (invalid UTF-8 as U+FFFD).
func FuzzAppendString(f *testing.F) {
	f.Add("chat.lobby")
	f.Add("a\"b\\c\x00\x1f\u2028é\xff")
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q -> %s: %v", s, b, err)
		}
		var want string
		m, _ := json.Marshal(s)
		_ = json.Unmarshal(m, &want)
		if got != want {
			t.Fatalf("%q read back as %q, encoding/json's as %q", s, got, want)
		}
		if text(b) != got {
			t.Fatalf("text(%s) = %q, want %q", b, text(b), got)
		}
	})
}
