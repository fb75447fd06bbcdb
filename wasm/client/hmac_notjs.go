//go:build !js

package client

import (
	"crypto/hmac"
	"crypto/md5"
	"encoding/base64"
)

// roleSecretHash is the role_secret proof: base64(HMAC-MD5(key = role
// secret, message = nonce)). MD5 is what RTM v2 specifies; the secret never
// crosses the wire and each nonce is single-use.
func roleSecretHash(secret, nonce string) string {
	m := hmac.New(md5.New, []byte(secret))
	m.Write([]byte(nonce))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}
