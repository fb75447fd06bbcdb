package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/app"
)

// pemOf encodes der as one PEM block.
func pemOf(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// noErr fails the test on err and returns v: wrap a call as
// noErr(t)(x509.MarshalPKCS8PrivateKey(k)).
func noErr(t *testing.T) func(v []byte, err error) []byte {
	return func(v []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestPEMKeysMintAndVerify(t *testing.T) {
	t.Parallel()
	ecKey, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der := noErr(t)
	rk := rsaKey()
	cert := selfSigned(t, ecKey)
	tests := []struct {
		name    string
		private []byte
		public  []byte
	}{
		{name: "rsa pkcs8/pkix", private: pemOf("PRIVATE KEY", der(x509.MarshalPKCS8PrivateKey(rk))), public: pemOf("PUBLIC KEY", der(x509.MarshalPKIXPublicKey(&rk.PublicKey)))},
		{name: "rsa pkcs1", private: pemOf("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk)), public: pemOf("RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&rk.PublicKey))},
		{name: "ec sec1/pkix", private: pemOf("EC PRIVATE KEY", der(x509.MarshalECPrivateKey(ecKey))), public: pemOf("PUBLIC KEY", der(x509.MarshalPKIXPublicKey(&ecKey.PublicKey)))},
		{name: "ec certificate", private: pemOf("PRIVATE KEY", der(x509.MarshalPKCS8PrivateKey(ecKey))), public: pemOf("CERTIFICATE", cert)},
		{name: "ed25519", private: pemOf("PRIVATE KEY", der(x509.MarshalPKCS8PrivateKey(edKey))), public: pemOf("PUBLIC KEY", der(x509.MarshalPKIXPublicKey(edKey.Public())))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			signer, err := ParsePrivateKeyPEM(tt.private)
			if err != nil {
				t.Fatalf("ParsePrivateKeyPEM: %v", err)
			}
			pub, err := ParsePublicKeyPEM(tt.public)
			if err != nil {
				t.Fatalf("ParsePublicKeyPEM: %v", err)
			}
			tok := mint(t, signer, Claims{Subscribe: []string{"chat"}, Expires: now.Add(time.Minute)})
			g, err := Verify(jwtApp(&app.JWTKey{Public: pub}), tok, now)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !g.Permissions.CanSubscribe("chat") {
				t.Fatalf("grant = %+v", g)
			}
		})
	}
}

// selfSigned returns the DER of a certificate for key's public key.
func selfSigned(t *testing.T, key crypto.Signer) []byte {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "sluice test"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(time.Hour),
	}
	return noErr(t)(x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key))
}

func TestParseKeyErrors(t *testing.T) {
	t.Parallel()
	weak, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der := noErr(t)
	tests := []struct {
		name  string
		parse func([]byte) error
		data  []byte
		want  error
	}{
		{name: "private not pem", parse: parsePriv, data: []byte("hello"), want: ErrNoPEM},
		{name: "public not pem", parse: parsePub, data: []byte("hello"), want: ErrNoPEM},
		{name: "private given public", parse: parsePriv, data: pemOf("PUBLIC KEY", []byte{1}), want: ErrPEMType},
		{name: "public given private", parse: parsePub, data: pemOf("PRIVATE KEY", []byte{1}), want: ErrPEMType},
		{name: "public weak curve", parse: parsePub, data: pemOf("PUBLIC KEY", der(x509.MarshalPKIXPublicKey(&weak.PublicKey))), want: app.ErrJWTKeyType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := tt.parse(tt.data); !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
	if err := parsePub(pemOf("PUBLIC KEY", []byte{1, 2, 3})); err == nil {
		t.Fatal("corrupt DER accepted")
	}
}

func parsePriv(b []byte) error { _, err := ParsePrivateKeyPEM(b); return err }
func parsePub(b []byte) error  { _, err := ParsePublicKeyPEM(b); return err }

func TestMintErrors(t *testing.T) {
	t.Parallel()
	exp := now.Add(time.Hour)
	tests := []struct {
		name   string
		key    any
		claims Claims
		want   error
	}{
		{name: "no expiry", key: hmacSecret, claims: Claims{}, want: ErrNoExpiry},
		{name: "short secret", key: []byte("short"), claims: Claims{Expires: exp}, want: ErrShortHMAC},
		{name: "string key", key: "a string", claims: Claims{Expires: exp}, want: ErrKeyType},
		{name: "public key", key: &rsaKey().PublicKey, claims: Claims{Expires: exp}, want: ErrKeyType},
		{name: "nil key", key: nil, claims: Claims{Expires: exp}, want: ErrNilKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := Mint(tt.key, tt.claims); !errors.Is(err, tt.want) {
				t.Fatalf("Mint error %v, want %v", err, tt.want)
			}
		})
	}
}

func TestMintOmitsUnsetClaims(t *testing.T) {
	t.Parallel()
	tok := mint(t, hmacSecret, Claims{Expires: now.Add(time.Hour)})
	g, err := Verify(jwtApp(&app.JWTKey{Secret: hmacSecret}), tok, now.Add(-time.Hour))
	if err != nil {
		t.Fatalf("a token without nbf/iat is refused before its expiry: %v", err)
	}
	if g.Role != "" || g.Subject != "" || g.Permissions.Publish != nil {
		t.Fatalf("grant = %+v", g)
	}
}
