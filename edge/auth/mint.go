package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sluicehq/sluice/edge/app"
)

// Errors of Mint and of the key parsers.
var (
	ErrNoExpiry  = errors.New("auth: a token needs an expiry")
	ErrKeyType   = errors.New("auth: unsupported key type")
	ErrNoPEM     = errors.New("auth: no PEM block found")
	ErrPEMType   = errors.New("auth: unexpected PEM block type")
	ErrShortHMAC = errors.New("auth: HMAC secret is shorter than 32 bytes")
	ErrNilKey    = errors.New("auth: nil key")
)

// Claims are what a minted token says; see Verify for how an edge reads
// them.
type Claims struct {
	// Role names a role of the app whose permissions the token grants;
	// empty for none.
	Role string
	// Publish, Subscribe and Presence are channel patterns the token
	// grants on top of the role's.
	Publish, Subscribe, Presence []string
	// Expires is required: an edge refuses tokens without exp.
	Expires time.Time
	// NotBefore, when set, is the earliest time the token is valid.
	NotBefore time.Time
	// IssuedAt, when set, is recorded as iat.
	IssuedAt time.Time
	// Subject, when set, is recorded as sub (who the token is for: the
	// connection's user id in presence).
	Subject string
	// Info, when set, is recorded as info: JSON that presence shows of the
	// user (a name, an avatar), at most MaxInfoBytes.
	Info json.RawMessage
}

// Mint signs a token for the jwt extension. The key chooses the algorithm:
// a []byte HMAC secret of at least 32 bytes signs HS256, an
// *rsa.PrivateKey RS256, an *ecdsa.PrivateKey the ES* of its curve, an
// ed25519.PrivateKey EdDSA. It is what `sluice token` uses; applications
// may mint their tokens with any JWT library the same way.
func Mint(key any, c Claims) (string, error) {
	if c.Expires.IsZero() {
		return "", ErrNoExpiry
	}
	method, err := signingMethod(key)
	if err != nil {
		return "", err
	}
	claims := tokenClaims{
		Role:      c.Role,
		Publish:   c.Publish,
		Subscribe: c.Subscribe,
		Presence:  c.Presence,
		Info:      c.Info,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   c.Subject,
			ExpiresAt: jwt.NewNumericDate(c.Expires),
			NotBefore: numericDate(c.NotBefore),
			IssuedAt:  numericDate(c.IssuedAt),
		},
	}
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		return "", fmt.Errorf("auth: sign token: %w", err)
	}
	return s, nil
}

// numericDate returns nil for the zero time, so the claim is left out.
func numericDate(t time.Time) *jwt.NumericDate {
	if t.IsZero() {
		return nil
	}
	return jwt.NewNumericDate(t)
}

// signingMethod picks the algorithm a signing key implies.
func signingMethod(key any) (jwt.SigningMethod, error) {
	switch k := key.(type) {
	case []byte:
		if len(k) < app.MinHMACKeyBytes {
			return nil, ErrShortHMAC
		}
		return jwt.SigningMethodHS256, nil
	case *rsa.PrivateKey:
		return jwt.SigningMethodRS256, nil
	case *ecdsa.PrivateKey:
		alg, err := ecdsaAlg(k.Curve)
		if err != nil {
			return nil, err
		}
		return jwt.GetSigningMethod(alg), nil
	case ed25519.PrivateKey:
		return jwt.SigningMethodEdDSA, nil
	case nil:
		return nil, ErrNilKey
	}
	return nil, fmt.Errorf("%w: %T", ErrKeyType, key)
}

// ParsePrivateKeyPEM parses the first PEM block of data as a signing key
// for Mint: PKCS #8 ("PRIVATE KEY": RSA, ECDSA or Ed25519), PKCS #1 ("RSA
// PRIVATE KEY") or SEC 1 ("EC PRIVATE KEY").
func ParsePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, ErrNoPEM
	}
	var (
		key any
		err error
	)
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("%w: %q", ErrPEMType, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: parse %s: %w", block.Type, err)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
		return k.(crypto.Signer), nil
	}
	return nil, fmt.Errorf("%w: %T", ErrKeyType, key)
}

// ParsePublicKeyPEM parses the first PEM block of data as a key that
// verifies tokens, for app.JWTKey.Public: PKIX ("PUBLIC KEY"), PKCS #1
// ("RSA PUBLIC KEY") or the key of a certificate ("CERTIFICATE"). The key
// must pass app.JWTKey.Validate (RSA of 2048 bits or more, ECDSA on P-256,
// P-384 or P-521, or Ed25519).
func ParsePublicKeyPEM(data []byte) (any, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, ErrNoPEM
	}
	var (
		key any
		err error
	)
	switch block.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case "CERTIFICATE":
		var cert *x509.Certificate
		cert, err = x509.ParseCertificate(block.Bytes)
		if err == nil {
			key = cert.PublicKey
		}
	default:
		return nil, fmt.Errorf("%w: %q", ErrPEMType, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: parse %s: %w", block.Type, err)
	}
	if err := (&app.JWTKey{Public: key}).Validate(); err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	return key, nil
}
