package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sluicehq/sluice/edge/app"
	jsoncodec "github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Reasons of a refused token. They say what was wrong with it, never
// anything about the key.
const (
	reasonJWTDisabled   = "jwt authentication is not enabled for this app"
	reasonMalformed     = "malformed token"
	reasonAlgorithm     = "token signing algorithm not accepted for this app"
	reasonSignature     = "invalid token signature"
	reasonExpired       = "token expired"
	reasonNotYetValid   = "token not valid yet"
	reasonIssuedFuture  = "token issued in the future"
	reasonNoExpiry      = "token has no exp claim"
	reasonInvalidClaims = "invalid token claims"
	reasonUnknownRole   = "token names a role this app does not have"
	reasonBadPattern    = "token grants an invalid channel pattern"
	reasonDateNotNumber = "token exp, nbf and iat must be numbers"
	reasonCritical      = "token header has critical extensions this edge does not understand"
	reasonSubject       = "token sub is longer than 256 bytes"
	reasonInfo          = "token info is larger than 4096 bytes of JSON"
)

// MaxInfoBytes bounds a token's info claim, in JSON: it is held for as
// long as the connection and sent to every watcher of its channels.
const MaxInfoBytes = 4 << 10

// Grant is what a verified token grants a connection.
type Grant struct {
	// Role is the role the token names, "" if none.
	Role string
	// Permissions are the role's permissions joined with those the token
	// lists itself.
	Permissions app.Permissions
	// Expires is when the token, and so the grant, expires.
	Expires time.Time
	// Subject is the token's sub claim: the connection's user id in
	// presence (and logs); "" if none.
	Subject string
	// Info is the token's info claim, what presence shows of the user: a
	// value of the rtm data model; nil if none.
	Info any
}

// tokenClaims is the JSON shape of a token's claims: the registered ones
// plus Sluice's.
type tokenClaims struct {
	Role      string   `json:"role,omitempty"`
	Publish   []string `json:"publish,omitempty"`
	Subscribe []string `json:"subscribe,omitempty"`
	Presence  []string `json:"presence,omitempty"`
	// Info is shown to the channels' presence watchers (any JSON value).
	Info json.RawMessage `json:"info,omitempty"`
	jwt.RegisteredClaims
}

// Verify checks a jwt-extension token against the app's key at time now and
// returns what it grants. The token must be signed with an algorithm of the
// key's type (HS* for a secret, RS*/PS* for RSA, the ES* of the curve for
// ECDSA, EdDSA for Ed25519): a token cannot choose how it is checked. It
// must carry exp; nbf and iat are honoured, within the key's leeway.
//
// Errors are *rtm.Error: auth_method_not_allowed when the app has no jwt
// key, authentication_failed otherwise, with a reason saying whether the
// token was malformed, badly signed, expired, not yet valid or named an
// unknown role.
func Verify(a *app.App, token string, now time.Time) (*Grant, error) {
	key := a.JWT
	if key == nil {
		return nil, &rtm.Error{Code: rtm.CodeAuthMethodNotAllowed, Reason: reasonJWTDisabled}
	}
	verifier, methods, err := verification(key)
	if err != nil {
		// The app was validated; a key that slipped through is the edge's
		// fault, but the client still only learns its token was refused.
		return nil, &rtm.Error{Code: rtm.CodeAuthenticationFailed, Reason: reasonSignature}
	}
	parser := jwt.NewParser(
		jwt.WithValidMethods(methods),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(key.Leeway),
		jwt.WithTimeFunc(func() time.Time { return now }),
	)
	var claims strictClaims
	t, err := parser.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return verifier, nil })
	if err != nil {
		return nil, &rtm.Error{Code: rtm.CodeAuthenticationFailed, Reason: tokenReason(err, token, methods)}
	}
	if _, ok := t.Header["crit"]; ok {
		// RFC 7515 section 4.1.11: a recipient must refuse a token whose
		// crit header lists an extension it does not understand, and this
		// edge understands none (an empty list is invalid too).
		return nil, &rtm.Error{Code: rtm.CodeAuthenticationFailed, Reason: reasonCritical}
	}
	return grant(a, &claims.tokenClaims, claims.ExpiresAt.Time)
}

// grant turns verified claims into a Grant expiring at exp.
func grant(a *app.App, c *tokenClaims, exp time.Time) (*Grant, error) {
	own := app.Permissions{Publish: c.Publish, Subscribe: c.Subscribe, Presence: c.Presence}
	if err := own.Validate(); err != nil {
		return nil, &rtm.Error{Code: rtm.CodeAuthenticationFailed, Reason: reasonBadPattern}
	}
	if len(c.Subject) > rtm.MaxUserIDLen {
		return nil, &rtm.Error{Code: rtm.CodeAuthenticationFailed, Reason: reasonSubject}
	}
	g := &Grant{Role: c.Role, Expires: exp, Subject: c.Subject}
	if len(c.Info) > MaxInfoBytes {
		return nil, &rtm.Error{Code: rtm.CodeAuthenticationFailed, Reason: reasonInfo}
	}
	if len(c.Info) > 0 && string(c.Info) != "null" {
		// The JSON codec's decoding gives the canonical data model, which
		// every codec re-encodes the same way.
		if err := (jsoncodec.Codec{}).DecodeBody(c.Info, &g.Info); err != nil {
			return nil, &rtm.Error{Code: rtm.CodeAuthenticationFailed, Reason: reasonInvalidClaims}
		}
	}
	var base app.Permissions
	if c.Role != "" {
		role, ok := a.Role(c.Role)
		if !ok {
			return nil, &rtm.Error{Code: rtm.CodeAuthenticationFailed, Reason: reasonUnknownRole}
		}
		base = role.Permissions
	}
	g.Permissions = base.Union(own)
	return g, nil
}

// tokenReason names what was wrong with a refused token.
func tokenReason(err error, token string, methods []string) string {
	switch {
	case errors.Is(err, errDateNotNumber):
		return reasonDateNotNumber
	case errors.Is(err, jwt.ErrTokenMalformed):
		return reasonMalformed
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return reasonAlgorithm // alg missing or unknown
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		if !algAllowed(token, methods) {
			return reasonAlgorithm
		}
		return reasonSignature
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return reasonNoExpiry
	case errors.Is(err, jwt.ErrTokenExpired):
		return reasonExpired
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return reasonNotYetValid
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return reasonIssuedFuture
	}
	return reasonInvalidClaims
}

// algAllowed reports whether the token's header names one of methods. It
// is called only for tokens whose header already parsed.
func algAllowed(token string, methods []string) bool {
	t, _, err := jwt.NewParser().ParseUnverified(token, jwt.MapClaims{})
	if err != nil || t.Method == nil {
		return false
	}
	for _, m := range methods {
		if m == t.Method.Alg() {
			return true
		}
	}
	return false
}

// verification returns the key that checks signatures and the algorithms
// allowed with it: only those of its type, against algorithm confusion
// (an HS256 token "signed" with an RSA public key, or alg "none").
func verification(k *app.JWTKey) (any, []string, error) {
	if k.Public == nil {
		return k.Secret, []string{"HS256", "HS384", "HS512"}, nil
	}
	switch pub := k.Public.(type) {
	case *rsa.PublicKey:
		return pub, []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}, nil
	case *ecdsa.PublicKey:
		alg, err := ecdsaAlg(pub.Curve)
		return pub, []string{alg}, err
	case ed25519.PublicKey:
		return pub, []string{"EdDSA"}, nil
	}
	return nil, nil, fmt.Errorf("%w: %T", app.ErrJWTKeyType, k.Public)
}

// ecdsaAlg returns the one JWS algorithm of an ECDSA curve.
func ecdsaAlg(c elliptic.Curve) (string, error) {
	switch c {
	case elliptic.P256():
		return "ES256", nil
	case elliptic.P384():
		return "ES384", nil
	case elliptic.P521():
		return "ES512", nil
	}
	return "", fmt.Errorf("%w: curve %v", app.ErrJWTKeyType, c)
}
