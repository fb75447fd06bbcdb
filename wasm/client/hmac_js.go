package client

import "syscall/js"

// roleSecretHash is the role_secret proof: base64(HMAC-MD5(key = role
// secret, message = nonce)). The browser build computes it with the small
// HMAC-MD5 of md5.go: crypto/hmac and crypto/md5 link the FIPS 140 module
// (AES, SHA-2, SHA-3, a DRBG), about 60 KB gzipped of sluice.wasm, and
// WebCrypto has no MD5. The browser's btoa writes the base64, which
// encoding/base64 would add 4 KB gzipped for.
func roleSecretHash(secret, nonce string) string {
	sum := hmacMD5([]byte(secret), []byte(nonce))
	u8 := js.Global().Get("Uint8Array").New(len(sum))
	js.CopyBytesToJS(u8, sum[:])
	// One character per byte, which is what btoa encodes.
	bin := js.Global().Get("String").Get("fromCharCode").Call("apply", js.Null(), u8)
	return js.Global().Call("btoa", bin).String()
}
