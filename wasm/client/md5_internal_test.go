package client

import (
	"crypto/hmac"
	"crypto/md5"
	"encoding/base64"
	"math/rand/v2"
	"testing"
)

// TestHMACMD5 checks the browser build's HMAC-MD5 against crypto/hmac and
// crypto/md5, and against the test vector of PROTOCOL.md.
func TestHMACMD5(t *testing.T) {
	t.Parallel()
	sum := hmacMD5([]byte("secret-key"), []byte("nonce"))
	if got := base64.StdEncoding.EncodeToString(sum[:]); got != "G12A8Dt0RdjHNx8P0lci9w==" {
		t.Fatalf("test vector: %s", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 200, 1000} {
		key := make([]byte, r.IntN(100))
		msg := make([]byte, n)
		for i := range key {
			key[i] = byte(r.Uint32())
		}
		for i := range msg {
			msg[i] = byte(r.Uint32())
		}
		if got, want := md5Sum(msg), md5.Sum(msg); got != want {
			t.Fatalf("md5 of %d bytes = %x, want %x", n, got, want)
		}
		m := hmac.New(md5.New, key)
		m.Write(msg)
		if got := hmacMD5(key, msg); string(got[:]) != string(m.Sum(nil)) {
			t.Fatalf("hmac-md5 with a %d-byte key over %d bytes differs", len(key), n)
		}
	}
}
