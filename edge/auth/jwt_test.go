package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/shared/rtm"
)

var (
	hmacSecret = []byte("0123456789abcdef0123456789abcdef")
	now        = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
)

// rsaKey is generated once: 2048-bit keys are slow to make under -race.
var rsaKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// jwtApp is testApp verifying tokens with key.
func jwtApp(key *app.JWTKey) *app.App {
	a := testApp()
	a.JWT = key
	return a
}

// mint signs claims with key or fails the test.
func mint(t *testing.T, key any, c Claims) string {
	t.Helper()
	tok, err := Mint(key, c)
	if err != nil {
		t.Fatalf("Mint: %v", err)
	}
	return tok
}

// rawToken signs arbitrary claims with the jwt library, for tokens Mint
// refuses to make.
func rawToken(t *testing.T, method jwt.SigningMethod, claims jwt.MapClaims, key any) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatalf("sign %s: %v", method.Alg(), err)
	}
	return tok
}

func TestVerifyValid(t *testing.T) {
	t.Parallel()
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edPub, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	exp := now.Add(time.Hour)
	tests := []struct {
		name   string
		verify *app.JWTKey
		sign   any
	}{
		{name: "HS256", verify: &app.JWTKey{Secret: hmacSecret}, sign: hmacSecret},
		{name: "ES256", verify: &app.JWTKey{Public: &ecKey.PublicKey}, sign: ecKey},
		{name: "EdDSA", verify: &app.JWTKey{Public: edPub}, sign: edPriv},
		{name: "RS256", verify: &app.JWTKey{Public: &rsaKey().PublicKey}, sign: rsaKey()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := jwtApp(tt.verify)
			tok := mint(t, tt.sign, Claims{Role: "admin", Expires: exp, IssuedAt: now, Subject: "user-1",
				Info: json.RawMessage(`{"name":"Ann","n":7}`), Presence: []string{"room.*"}})
			g, err := Verify(a, tok, now)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if g.Role != "admin" || g.Subject != "user-1" || !g.Expires.Equal(exp) {
				t.Fatalf("grant = %+v", g)
			}
			// The info claim in the data model, as every codec carries it.
			if want := map[string]any{"name": "Ann", "n": int64(7)}; !reflect.DeepEqual(g.Info, want) {
				t.Fatalf("info = %#v, want %#v", g.Info, want)
			}
			if !g.Permissions.CanPresence("room.1") || g.Permissions.CanPresence("chat") {
				t.Fatalf("presence grant: %+v", g.Permissions)
			}
			if !g.Permissions.CanPublish("$sys.x") || !g.Permissions.CanSubscribe("chat") {
				t.Fatalf("grant lacks the admin role's permissions: %+v", g.Permissions)
			}
		})
	}
}

func TestVerifyPermissions(t *testing.T) {
	t.Parallel()
	a := jwtApp(&app.JWTKey{Secret: hmacSecret})
	a.Roles["reader"] = &app.Role{Name: "reader", Permissions: app.Permissions{Subscribe: []string{"news.*"}}}
	exp := now.Add(time.Minute)
	tests := []struct {
		name      string
		claims    Claims
		channel   string
		publish   bool
		subscribe bool
	}{
		{name: "explicit prefix", claims: Claims{Publish: []string{"user.42.*"}, Subscribe: []string{"user.42.*"}}, channel: "user.42.inbox", publish: true, subscribe: true},
		{name: "explicit prefix other user", claims: Claims{Publish: []string{"user.42.*"}}, channel: "user.43.inbox"},
		{name: "explicit exact", claims: Claims{Subscribe: []string{"lobby"}}, channel: "lobby", subscribe: true},
		{name: "star excludes reserved", claims: Claims{Publish: []string{"*"}}, channel: "$sys.stats"},
		{name: "role only", claims: Claims{Role: "reader"}, channel: "news.today", subscribe: true},
		{name: "union with role", claims: Claims{Role: "reader", Publish: []string{"news.*"}}, channel: "news.today", publish: true, subscribe: true},
		{name: "no role no permissions", claims: Claims{}, channel: "news.today"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := tt.claims
			c.Expires = exp
			g, err := Verify(a, mint(t, hmacSecret, c), now)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if got := g.Permissions.CanPublish(tt.channel); got != tt.publish {
				t.Errorf("CanPublish(%q) = %v, want %v", tt.channel, got, tt.publish)
			}
			if got := g.Permissions.CanSubscribe(tt.channel); got != tt.subscribe {
				t.Errorf("CanSubscribe(%q) = %v, want %v", tt.channel, got, tt.subscribe)
			}
		})
	}
	// The role's own permissions are left alone by the union.
	if r := a.Roles["reader"]; len(r.Publish) != 0 || len(r.Subscribe) != 1 {
		t.Fatalf("Verify modified the role: %+v", r.Permissions)
	}
}

func TestVerifyRefused(t *testing.T) {
	t.Parallel()
	rsaApp := jwtApp(&app.JWTKey{Public: &rsaKey().PublicKey})
	hsApp := jwtApp(&app.JWTKey{Secret: hmacSecret})
	leewayApp := jwtApp(&app.JWTKey{Secret: hmacSecret, Leeway: 5 * time.Second})
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ec384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecApp := jwtApp(&app.JWTKey{Public: &ecKey.PublicKey})
	pubDER, err := x509.MarshalPKIXPublicKey(&rsaKey().PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	exp := now.Add(time.Hour).Unix()
	valid := mint(t, hmacSecret, Claims{Role: "admin", Expires: now.Add(time.Hour)})
	parts := strings.Split(valid, ".")

	tests := []struct {
		name   string
		app    *app.App
		token  string
		code   rtm.Code
		reason string
	}{
		{name: "no jwt key", app: testApp(), token: valid, code: rtm.CodeAuthMethodNotAllowed, reason: reasonJWTDisabled},
		{name: "expired", app: hsApp, token: mint(t, hmacSecret, Claims{Expires: now.Add(-time.Second)}), reason: reasonExpired},
		{name: "expired past leeway", app: leewayApp, token: mint(t, hmacSecret, Claims{Expires: now.Add(-6 * time.Second)}), reason: reasonExpired},
		{name: "not yet valid", app: hsApp, token: mint(t, hmacSecret, Claims{Expires: now.Add(time.Hour), NotBefore: now.Add(time.Minute)}), reason: reasonNotYetValid},
		{name: "issued in the future", app: hsApp, token: mint(t, hmacSecret, Claims{Expires: now.Add(time.Hour), IssuedAt: now.Add(time.Minute)}), reason: reasonIssuedFuture},
		{name: "missing exp", app: hsApp, token: rawToken(t, jwt.SigningMethodHS256, jwt.MapClaims{"role": "admin"}, hmacSecret), reason: reasonNoExpiry},
		{name: "forged signature", app: hsApp, token: mint(t, []byte("another secret of thirty-two bytes!"), Claims{Role: "admin", Expires: now.Add(time.Hour)}), reason: reasonSignature},
		{name: "tampered claims", app: hsApp, token: parts[0] + "." + mintPayload(t, "root") + "." + parts[2], reason: reasonSignature},
		{name: "forged ES256", app: ecApp, token: mint(t, mustEC(t), Claims{Expires: now.Add(time.Hour)}), reason: reasonSignature},
		{name: "ES384 against P-256 key", app: ecApp, token: mint(t, ec384, Claims{Expires: now.Add(time.Hour)}), reason: reasonAlgorithm},
		{name: "alg none", app: hsApp, token: rawToken(t, jwt.SigningMethodNone, jwt.MapClaims{"role": "admin", "exp": exp}, jwt.UnsafeAllowNoneSignatureType), reason: reasonAlgorithm},
		{name: "alg confusion", app: rsaApp, token: rawToken(t, jwt.SigningMethodHS256, jwt.MapClaims{"role": "admin", "exp": exp}, pubPEM), reason: reasonAlgorithm},
		{name: "alg confusion DER", app: rsaApp, token: rawToken(t, jwt.SigningMethodHS256, jwt.MapClaims{"role": "admin", "exp": exp}, pubDER), reason: reasonAlgorithm},
		{name: "RS256 against secret", app: hsApp, token: mint(t, rsaKey(), Claims{Expires: now.Add(time.Hour)}), reason: reasonAlgorithm},
		{name: "unknown alg", app: hsApp, token: "eyJhbGciOiJYWDEiLCJ0eXAiOiJKV1QifQ." + parts[1] + "." + parts[2], reason: reasonAlgorithm},
		{name: "unknown role", app: hsApp, token: mint(t, hmacSecret, Claims{Role: "root", Expires: now.Add(time.Hour)}), reason: reasonUnknownRole},
		{name: "bad pattern", app: hsApp, token: mint(t, hmacSecret, Claims{Publish: []string{"a*b"}, Expires: now.Add(time.Hour)}), reason: reasonBadPattern},
		{name: "bad presence pattern", app: hsApp, token: mint(t, hmacSecret, Claims{Presence: []string{"a*b"}, Expires: now.Add(time.Hour)}), reason: reasonBadPattern},
		{name: "sub too long", app: hsApp, token: mint(t, hmacSecret, Claims{Subject: strings.Repeat("u", 257), Expires: now.Add(time.Hour)}), reason: reasonSubject},
		{name: "info too large", app: hsApp, token: mint(t, hmacSecret, Claims{Info: json.RawMessage(`"` + strings.Repeat("i", MaxInfoBytes) + `"`), Expires: now.Add(time.Hour)}), reason: reasonInfo},
		{name: "garbage", app: hsApp, token: "not a token", reason: reasonMalformed},
		{name: "empty", app: hsApp, token: "", reason: reasonMalformed},
		{name: "bad base64", app: hsApp, token: "!!!.???.***", reason: reasonMalformed},
		{name: "string exp", app: hsApp, token: rawToken(t, jwt.SigningMethodHS256, jwt.MapClaims{"role": "admin", "exp": strconv.FormatInt(exp, 10)}, hmacSecret), reason: reasonDateNotNumber},
		{name: "string nbf", app: hsApp, token: rawToken(t, jwt.SigningMethodHS256, jwt.MapClaims{"exp": exp, "nbf": strconv.FormatInt(now.Unix(), 10)}, hmacSecret), reason: reasonDateNotNumber},
		{name: "string iat", app: hsApp, token: rawToken(t, jwt.SigningMethodHS256, jwt.MapClaims{"exp": exp, "iat": "0"}, hmacSecret), reason: reasonDateNotNumber},
		{name: "crit header", app: hsApp, token: critToken(t, []any{"exp"}), reason: reasonCritical},
		{name: "empty crit header", app: hsApp, token: critToken(t, []any{}), reason: reasonCritical},
		{name: "claims of wrong type", app: hsApp, token: rawToken(t, jwt.SigningMethodHS256, jwt.MapClaims{"publish": "chat", "exp": exp}, hmacSecret), reason: reasonMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code := tt.code
			if code == "" {
				code = rtm.CodeAuthenticationFailed
			}
			g, err := Verify(tt.app, tt.token, now)
			if g != nil {
				t.Fatalf("token accepted: %+v", g)
			}
			if reason := wantAuthError(t, err, code); reason != tt.reason {
				t.Fatalf("reason %q, want %q", reason, tt.reason)
			}
		})
	}
}

// critToken is a valid HS256 token for "admin" whose header carries crit.
func critToken(t *testing.T, crit []any) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"role": "admin", "exp": now.Add(time.Hour).Unix()})
	tok.Header["crit"] = crit
	s, err := tok.SignedString(hmacSecret)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return s
}

// mintPayload returns the base64url payload of a token naming role, to
// splice into another token's signature.
func mintPayload(t *testing.T, role string) string {
	t.Helper()
	tok := mint(t, []byte("some other secret, thirty-two bytes"), Claims{Role: role, Expires: now.Add(time.Hour)})
	return strings.Split(tok, ".")[1]
}

// mustEC returns a fresh P-256 key.
func mustEC(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestVerifyLeeway(t *testing.T) {
	t.Parallel()
	a := jwtApp(&app.JWTKey{Secret: hmacSecret, Leeway: 5 * time.Second})
	tok := mint(t, hmacSecret, Claims{Expires: now.Add(-4 * time.Second), NotBefore: now.Add(4 * time.Second)})
	if _, err := Verify(a, tok, now); err != nil {
		t.Fatalf("token within leeway refused: %v", err)
	}
}

func TestVerifyReasonsKeepKeysSecret(t *testing.T) {
	t.Parallel()
	a := jwtApp(&app.JWTKey{Secret: hmacSecret})
	tok := mint(t, []byte("another secret of thirty-two bytes!"), Claims{Expires: now.Add(time.Hour)})
	_, err := Verify(a, tok, now)
	if err == nil || strings.Contains(err.Error(), string(hmacSecret)) {
		t.Fatalf("error %v", err)
	}
}

func TestVerifyPS256(t *testing.T) {
	t.Parallel()
	a := jwtApp(&app.JWTKey{Public: &rsaKey().PublicKey})
	tok := rawToken(t, jwt.SigningMethodPS256, jwt.MapClaims{"role": "admin", "exp": now.Add(time.Minute).Unix()}, rsaKey())
	g, err := Verify(a, tok, now)
	if err != nil || g.Role != "admin" {
		t.Fatalf("Verify(PS256) = %+v, %v", g, err)
	}
}

// FuzzVerify checks that no token but a properly signed one is accepted,
// and that every refusal is a protocol error.
func FuzzVerify(f *testing.F) {
	good := func(c Claims) string {
		tok, err := Mint(hmacSecret, c)
		if err != nil {
			f.Fatal(err)
		}
		return tok
	}
	f.Add(good(Claims{Role: "admin", Expires: now.Add(time.Hour)}))
	f.Add(good(Claims{Subscribe: []string{"a*"}, Expires: now.Add(time.Hour), NotBefore: now}))
	f.Add("eyJhbGciOiJub25lIn0.eyJleHAiOjF9.")
	f.Add("a.b.c")
	f.Add("")
	a := jwtApp(&app.JWTKey{Secret: hmacSecret})
	f.Fuzz(func(t *testing.T, token string) {
		g, err := Verify(a, token, now)
		if err != nil {
			if _, ok := rtm.AsError(err); !ok {
				t.Fatalf("error %v is not an *rtm.Error", err)
			}
			return
		}
		// Accepted: it must carry a valid HS* signature by our secret.
		if _, err := jwt.Parse(token, func(*jwt.Token) (any, error) { return hmacSecret, nil },
			jwt.WithValidMethods([]string{"HS256", "HS384", "HS512"}), jwt.WithTimeFunc(func() time.Time { return now })); err != nil {
			t.Fatalf("accepted a token the library refuses: %v (grant %+v)", err, g)
		}
	})
}
