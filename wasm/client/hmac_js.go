//go:build js

package client

import "encoding/base64"

// roleSecretHash is the role_secret proof: base64(HMAC-MD5(key = role
// secret, message = nonce)). The browser build computes it with the small
// HMAC-MD5 of md5.go: crypto/hmac and crypto/md5 link the FIPS 140 module
// (AES, SHA-2, SHA-3, a DRBG), about 60 KB gzipped of sluice.wasm, and
// WebCrypto has no MD5.
func roleSecretHash(secret, nonce string) string {
	sum := hmacMD5([]byte(secret), []byte(nonce))
	return base64.StdEncoding.EncodeToString(sum[:])
}
