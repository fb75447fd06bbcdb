package client

import (
	"encoding/base64"
	"testing"
	"time"
)

// TestTokenExpiry reads exp out of token payloads as an edge would have
// them, and gives up (zero) on what is not a JWT with a numeric exp.
func TestTokenExpiry(t *testing.T) {
	t.Parallel()
	tok := func(payload string) string {
		return "e30." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + ".sig"
	}
	tests := []struct {
		name  string
		token string
		want  time.Time
	}{
		{name: "integer", token: tok(`{"role":"a","exp":1700000000}`), want: time.Unix(1700000000, 0)},
		{name: "spaces and fraction", token: tok(`{ "exp" : 1700000000.5 , "sub":"x"}`), want: time.Unix(1700000000, 5e8)},
		{name: "last key", token: tok(`{"exp":1700000001}`), want: time.Unix(1700000001, 0)},
		{name: "exp as a value first", token: tok(`{"sub":"exp","exp":1700000002}`), want: time.Unix(1700000002, 0)},
		{name: "no exp", token: tok(`{"role":"a"}`)},
		{name: "string exp", token: tok(`{"exp":"1700000000"}`)},
		{name: "not a jwt", token: "opaque"},
		{name: "bad base64", token: "a.!!!.c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tokenExpiry(tt.token); !got.Equal(tt.want) {
				t.Fatalf("tokenExpiry = %v, want %v", got, tt.want)
			}
		})
	}
}
