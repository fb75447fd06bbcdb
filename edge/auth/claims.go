package auth

import (
	"errors"

	"github.com/golang-jwt/jwt/v5"
)

// errDateNotNumber refuses a time claim that is not a JSON number.
var errDateNotNumber = errors.New("auth: NumericDate claim is not a number")

// strictClaims is what Verify decodes: tokenClaims with exp, nbf and iat
// that must be JSON numbers. The jwt library also takes a string holding
// a number ("exp":"1700000000"), which RFC 7519 section 2 (NumericDate)
// does not allow; a verifier that is lax where others are strict invites
// tokens that mean different things to different parties. The fields
// here are shallower than RegisteredClaims' own, so encoding/json fills
// them instead, and the methods below shadow the promoted ones the
// parser validates with.
type strictClaims struct {
	ExpiresAt *numberDate `json:"exp,omitempty"`
	NotBefore *numberDate `json:"nbf,omitempty"`
	IssuedAt  *numberDate `json:"iat,omitempty"`
	tokenClaims
}

func (c strictClaims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt.date(), nil }
func (c strictClaims) GetNotBefore() (*jwt.NumericDate, error)      { return c.NotBefore.date(), nil }
func (c strictClaims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt.date(), nil }

// numberDate is a NumericDate that only a JSON number sets.
type numberDate struct{ jwt.NumericDate }

// UnmarshalJSON refuses anything but a number; JSON null never gets here
// (it leaves the pointer nil: the claim is absent).
func (d *numberDate) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return errDateNotNumber
	}
	return d.NumericDate.UnmarshalJSON(b)
}

// date returns the claim, nil when absent.
func (d *numberDate) date() *jwt.NumericDate {
	if d == nil {
		return nil
	}
	return &d.NumericDate
}
