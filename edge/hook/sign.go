package hook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries the signature of every request the edge makes to
// a backend: "t=UNIX_SECONDS,v1=HEX", where HEX is the lowercase hex
// HMAC-SHA256, keyed with the app's hook secret, of the text of t, a
// period and the request's body as sent (bytes, before any JSON parsing):
//
//	v1 = hex(HMAC-SHA256(secret, t + "." + body))
//
// A backend recomputes it, compares in constant time, and refuses a t too
// far from its clock (Verify allows 5 minutes), so that a captured request
// cannot be replayed later. Events carry ids too, for the duplicates
// at-least-once delivery brings.
const SignatureHeader = "Sluice-Signature"

// Errors of Verify.
var (
	ErrSignatureFormat = errors.New("hook: the signature header is not t=UNIX,v1=HEX")
	ErrSignatureStale  = errors.New("hook: the signature's time is too far from now")
	ErrSignatureWrong  = errors.New("hook: the signature does not match the body")
)

// DefaultTolerance is how far from now Verify accepts a signature's time.
const DefaultTolerance = 5 * time.Minute

// Sign returns the SignatureHeader value of body sent at now.
func Sign(secret string, now time.Time, body []byte) string {
	t := strconv.FormatInt(now.Unix(), 10)
	return "t=" + t + ",v1=" + hex.EncodeToString(mac(secret, t, body))
}

func mac(secret, t string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(t))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a SignatureHeader value against body, as a backend
// written in Go would: the time within tolerance of now (DefaultTolerance
// when 0), the HMAC compared in constant time.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var t, v1 string
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrSignatureFormat
		}
		switch k {
		case "t":
			t = v
		case "v1":
			v1 = v
		}
	}
	sec, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v1 == "" {
		return ErrSignatureFormat
	}
	got, err := hex.DecodeString(v1)
	if err != nil {
		return ErrSignatureFormat
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrSignatureStale
	}
	if !hmac.Equal(got, mac(secret, t, body)) {
		return ErrSignatureWrong
	}
	return nil
}
