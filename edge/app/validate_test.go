package app

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/store"
)

func TestAppValidate(t *testing.T) {
	t.Parallel()
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	weakEC, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte(strings.Repeat("k", MinHMACKeyBytes))
	tests := []struct {
		name   string
		edit   func(a *App)
		want   error
		prefix string // the field the error names
	}{
		{name: "demo", edit: func(*App) {}},
		{name: "empty key", edit: func(a *App) { a.Key = "" }, want: ErrKeyEmpty, prefix: "appkey"},
		{name: "slash in key", edit: func(a *App) { a.Key = "a/b" }, want: ErrKeyChar, prefix: "appkey"},
		{name: "nul in key", edit: func(a *App) { a.Key = "a\x00" }, want: ErrKeyChar, prefix: "appkey"},
		{name: "space in key", edit: func(a *App) { a.Key = "a b" }, want: ErrKeyChar, prefix: "appkey"},
		{name: "long key", edit: func(a *App) { a.Key = strings.Repeat("a", MaxKeyLen+1) }, want: ErrKeyLong, prefix: "appkey"},
		{name: "key charset", edit: func(a *App) { a.Key = "Az09-._~" }},
		{name: "api keys", edit: func(a *App) { a.APIKeys = []string{strings.Repeat("a", MinAPIKeyBytes), strings.Repeat("b", 40)} }},
		{name: "short api key", edit: func(a *App) { a.APIKeys = []string{strings.Repeat("a", 20), strings.Repeat("b", MinAPIKeyBytes-1)} }, want: ErrAPIKeyShort, prefix: "api_keys[1]"},
		{name: "api key twice", edit: func(a *App) { a.APIKeys = []string{strings.Repeat("a", 20), strings.Repeat("a", 20)} }, want: ErrAPIKeyDup, prefix: "api_keys[1]"},
		{name: "negative max", edit: func(a *App) { a.MaxMessageBytes = -1 }, want: ErrNegative, prefix: "max_message_bytes"},
		{name: "no channel limit", edit: func(a *App) { a.MaxChannels = -1 }},
		{name: "channel limit below -1", edit: func(a *App) { a.MaxChannels = -2 }, want: ErrNegative, prefix: "max_channels"},
		{name: "no default role", edit: func(a *App) { delete(a.Roles, DefaultRole) }, want: ErrNoDefaultRole, prefix: "roles"},
		{name: "nil role", edit: func(a *App) { a.Roles["x"] = nil }, want: ErrRoleNil, prefix: "roles.x"},
		{name: "misnamed role", edit: func(a *App) { a.Roles["x"] = &Role{Name: "y"} }, want: ErrRoleName, prefix: "roles.x"},
		{name: "control in role name", edit: func(a *App) { a.Roles["a\tb"] = &Role{Name: "a\tb"} }, prefix: `roles."a\tb"`},
		{
			name: "bad publish pattern",
			edit: func(a *App) {
				a.Roles["admin"] = &Role{Name: "admin", Permissions: Permissions{Publish: []string{"*", "a*b"}}}
			},
			want:   ErrPatternStar,
			prefix: "roles.admin.publish[1]",
		},
		{
			name:   "bad subscribe pattern",
			edit:   func(a *App) { a.Roles[DefaultRole].Subscribe = []string{""} },
			want:   ErrPatternEmpty,
			prefix: "roles.default.subscribe[0]",
		},
		{name: "bad channel rule", edit: func(a *App) { a.Channels = []ChannelRule{{Pattern: "*x"}} }, want: ErrPatternStar, prefix: "channels[0].pattern"},
		{
			name: "negative retention",
			edit: func(a *App) {
				a.Channels = []ChannelRule{{Pattern: "*", Retention: store.Retention{TTL: -time.Second}}}
			},
			want:   ErrNegative,
			prefix: "channels[0].ttl",
		},
		{
			name: "negative grace and history mean none",
			edit: func(a *App) {
				a.Channels = []ChannelRule{{Pattern: "*", Retention: store.Retention{Grace: -1, HistoryCount: -1, HistoryAge: -1}}}
			},
		},
		{name: "hmac key", edit: func(a *App) { a.JWT = &JWTKey{Secret: secret} }},
		{name: "short hmac key", edit: func(a *App) { a.JWT = &JWTKey{Secret: []byte("short")} }, want: ErrJWTSecretShort, prefix: "jwt"},
		{name: "empty jwt key", edit: func(a *App) { a.JWT = &JWTKey{} }, want: ErrJWTKeyNone, prefix: "jwt"},
		{name: "both jwt keys", edit: func(a *App) { a.JWT = &JWTKey{Secret: secret, Public: edPub} }, want: ErrJWTKeyBoth, prefix: "jwt"},
		{name: "negative leeway", edit: func(a *App) { a.JWT = &JWTKey{Secret: secret, Leeway: -1} }, want: ErrNegative, prefix: "jwt"},
		{name: "ecdsa key", edit: func(a *App) { a.JWT = &JWTKey{Public: &ecKey.PublicKey} }},
		{name: "ed25519 key", edit: func(a *App) { a.JWT = &JWTKey{Public: edPub} }},
		{name: "p224 key", edit: func(a *App) { a.JWT = &JWTKey{Public: &weakEC.PublicKey} }, want: ErrJWTKeyType, prefix: "jwt"},
		{name: "private key", edit: func(a *App) { a.JWT = &JWTKey{Public: ecKey} }, want: ErrJWTKeyType, prefix: "jwt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := Demo()
			tt.edit(a)
			err := a.Validate()
			if tt.prefix == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("Validate() = %v, want %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.prefix+": ") {
				t.Fatalf("Validate() = %q, want it to name %q", err, tt.prefix)
			}
		})
	}
}

func TestValidateRSAKeySize(t *testing.T) {
	t.Parallel()
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&JWTKey{Public: &small.PublicKey}).Validate(); !errors.Is(err, ErrJWTKeyWeak) {
		t.Fatalf("1024-bit RSA: %v, want ErrJWTKeyWeak", err)
	}
	big, err := rsa.GenerateKey(rand.Reader, MinRSABits)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&JWTKey{Public: &big.PublicKey}).Validate(); err != nil {
		t.Fatalf("2048-bit RSA: %v", err)
	}
}
