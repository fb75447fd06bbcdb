package app

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/shared/rtm"
)

// MaxKeyLen is the longest appkey.
const MaxKeyLen = 128

// MinHMACKeyBytes is the shortest HMAC secret accepted for the jwt
// extension: RFC 7518 section 3.2 requires a key at least as long as the
// hash output, and a shorter one can be brute-forced from any token.
const MinHMACKeyBytes = 32

// MinAPIKeyBytes is the shortest API key accepted: 16 random bytes (128
// bits) cannot be guessed over the network.
const MinAPIKeyBytes = 16

// MinRSABits is the smallest RSA modulus accepted for the jwt extension.
const MinRSABits = 2048

// Errors of App.Validate, wrapped with the field they concern.
var (
	ErrKeyEmpty       = errors.New("app: appkey is empty")
	ErrKeyLong        = errors.New("app: appkey is longer than 128 bytes")
	ErrKeyChar        = errors.New("app: appkey may only hold letters, digits and - . _ ~")
	ErrNoDefaultRole  = errors.New(`app: no "default" role`)
	ErrRoleName       = errors.New("app: role name does not match its key")
	ErrRoleNil        = errors.New("app: role is nil")
	ErrNegative       = errors.New("app: value is negative")
	ErrJWTKeyNone     = errors.New("app: jwt key has neither a secret nor a public key")
	ErrJWTKeyBoth     = errors.New("app: jwt key has both a secret and a public key")
	ErrJWTSecretShort = errors.New("app: jwt secret is shorter than 32 bytes")
	ErrJWTKeyType     = errors.New("app: unsupported jwt public key type")
	ErrJWTKeyWeak     = errors.New("app: jwt public key is too weak")
	ErrAPIKeyShort    = errors.New("app: api key is shorter than 16 bytes")
	ErrAPIKeyDup      = errors.New("app: api key is listed twice")
)

// Validate checks an app before the edge serves it. The error names the
// field at fault by its configuration path ("appkey",
// "roles.admin.publish[1]", "channels[0].pattern", "jwt", ...).
//
// The "default" role must exist: Validate never fills it in, because an App
// is immutable once served and a validator that edits what it checks hides
// mistakes. A configuration loader that wants "no default role" to mean
// "no permissions before authentication" adds an empty one itself.
func (a *App) Validate() error {
	if err := validateKey(a.Key); err != nil {
		return fmt.Errorf("appkey: %w", err)
	}
	if a.MaxMessageBytes < 0 {
		return fmt.Errorf("max_message_bytes: %w", ErrNegative)
	}
	if a.MaxChannels < -1 {
		return fmt.Errorf("max_channels: %w (-1 means no limit)", ErrNegative)
	}
	if err := a.validateRoles(); err != nil {
		return err
	}
	for i, c := range a.Channels {
		if err := ValidatePattern(c.Pattern); err != nil {
			return fmt.Errorf("channels[%d].pattern: %w", i, err)
		}
		// Negative Grace and History* mean "none" to the store; a negative
		// TTL means nothing and is surely a mistake.
		if c.Retention.TTL < 0 {
			return fmt.Errorf("channels[%d].ttl: %w", i, ErrNegative)
		}
	}
	if a.JWT != nil {
		if err := a.JWT.Validate(); err != nil {
			return fmt.Errorf("jwt: %w", err)
		}
	}
	if err := a.Hooks.Validate(); err != nil {
		return fmt.Errorf("hooks.%w", err)
	}
	return a.validateAPIKeys()
}

// validateAPIKeys checks each API key's length and that none is listed
// twice. Errors name the key by index, never quote it: it is a secret.
func (a *App) validateAPIKeys() error {
	for i, k := range a.APIKeys {
		if len(k) < MinAPIKeyBytes {
			return fmt.Errorf("api_keys[%d]: %w", i, ErrAPIKeyShort)
		}
		for j := range i {
			if a.APIKeys[j] == k {
				return fmt.Errorf("api_keys[%d]: %w (as api_keys[%d])", i, ErrAPIKeyDup, j)
			}
		}
	}
	return nil
}

// validateKey checks an appkey: 1 to MaxKeyLen bytes of URL-unreserved
// characters, so it travels unescaped in the ?appkey= query, in logs and in
// metric labels.
func validateKey(key string) error {
	if key == "" {
		return ErrKeyEmpty
	}
	if len(key) > MaxKeyLen {
		return ErrKeyLong
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("-._~", c) >= 0
		if !ok {
			return fmt.Errorf("%w (byte %d is %q)", ErrKeyChar, i, c)
		}
	}
	return nil
}

// validateRoles checks the roles in name order, so the error is the same
// from one run to the next.
func (a *App) validateRoles() error {
	if _, ok := a.Role(DefaultRole); !ok {
		return fmt.Errorf("roles: %w", ErrNoDefaultRole)
	}
	names := make([]string, 0, len(a.Roles))
	for name := range a.Roles {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r := a.Roles[name]
		switch {
		case r == nil:
			return fmt.Errorf("roles.%s: %w", name, ErrRoleNil)
		case r.Name != name:
			return fmt.Errorf("roles.%s: %w (%q)", name, ErrRoleName, r.Name)
		}
		// Role names arrive in handshakes and leave in logs: the channel
		// rules (1 to 256 bytes of UTF-8, no control characters) keep them
		// printable.
		if err := rtm.ValidateChannel(name); err != nil {
			return fmt.Errorf("roles.%q: invalid role name: %w", name, err)
		}
		if err := r.Permissions.Validate(); err != nil {
			return fmt.Errorf("roles.%s.%w", name, err)
		}
	}
	return nil
}

// Validate checks a jwt key: an HMAC secret of at least MinHMACKeyBytes, or
// an RSA (MinRSABits or more), ECDSA (P-256, P-384, P-521) or Ed25519 public
// key, not both.
func (k *JWTKey) Validate() error {
	switch {
	case len(k.Secret) == 0 && k.Public == nil:
		return ErrJWTKeyNone
	case len(k.Secret) > 0 && k.Public != nil:
		return ErrJWTKeyBoth
	case k.Leeway < 0:
		return fmt.Errorf("leeway: %w", ErrNegative)
	case k.MaxTokenTTL < 0:
		return fmt.Errorf("max token ttl: %w", ErrNegative)
	case k.Public == nil:
		if len(k.Secret) < MinHMACKeyBytes {
			return ErrJWTSecretShort
		}
		return nil
	}
	return validatePublicKey(k.Public)
}

// validatePublicKey accepts the public key types the jwt extension verifies.
func validatePublicKey(pub any) error {
	switch key := pub.(type) {
	case *rsa.PublicKey:
		if key.N == nil || key.N.BitLen() < MinRSABits {
			return fmt.Errorf("%w: RSA keys need %d bits or more", ErrJWTKeyWeak, MinRSABits)
		}
	case *ecdsa.PublicKey:
		switch key.Curve {
		case elliptic.P256(), elliptic.P384(), elliptic.P521():
		default:
			return fmt.Errorf("%w: ECDSA keys must use P-256, P-384 or P-521", ErrJWTKeyType)
		}
	case ed25519.PublicKey:
		if len(key) != ed25519.PublicKeySize {
			return fmt.Errorf("%w: Ed25519 key of %d bytes", ErrJWTKeyType, len(key))
		}
	default:
		return fmt.Errorf("%w: %T", ErrJWTKeyType, pub)
	}
	return nil
}
