package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/shared/rtm"
)

// DefaultTokenTTL is the lifetime of a minted token when the request does
// not ask for one (and the app's limit is not shorter): long enough to
// open a connection or a stream, short enough that a leaked one soon dies.
const DefaultTokenTTL = 5 * time.Minute

type tokenRequest struct {
	Role string `json:"role"`
	User string `json:"user"`
	// Info is what presence shows of the user (the token's info claim).
	Info json.RawMessage `json:"info"`
	// Publish, Subscribe and Presence are channel patterns granted on top
	// of the role's, as a JWT's claims of the same names.
	Publish   []string `json:"publish"`
	Subscribe []string `json:"subscribe"`
	Presence  []string `json:"presence"`
	// TTL is the token's lifetime in seconds; 0: DefaultTokenTTL.
	TTL int64 `json:"ttl"`
}

// TokenAnswer is the answer of token: a JWT the edge's jwt authentication
// accepts, and when it expires (Unix seconds).
type TokenAnswer struct {
	Token     string `json:"token"`
	ExpiresAt int64  `json:"expires_at"`
}

// token mints a short-lived JWT for a client that cannot do the role
// secret challenge (an EventSource, a curl): signed with the app's HMAC
// jwt_key, which every edge serving the app verifies, so it is accepted
// wherever a JWT is, on any edge of a cluster. Everything a token grants
// is checked here, so a token the API answers is one an edge accepts.
func (h *Handler) token(_ *http.Request, appKey string, body []byte) (any, error) {
	var req tokenRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	a := h.apps[appKey]
	if a == nil || a.JWT == nil || len(a.JWT.Secret) == 0 {
		return nil, &Error{Status: http.StatusBadRequest, Code: string(rtm.CodeAuthMethodNotAllowed),
			Reason: "minting tokens needs the app's jwt_key (an HMAC secret); a public key cannot sign"}
	}
	ttl, err := tokenTTL(req.TTL, a.JWT.TokenTTLLimit())
	if err != nil {
		return nil, err
	}
	if err := checkGrant(a, &req); err != nil {
		return nil, err
	}
	exp := h.now().Add(ttl)
	// No iat: an edge refuses a token issued in its future, and another
	// edge of the cluster whose clock is a little behind this one's would
	// then refuse a token minted a moment ago.
	tok, err := auth.Mint(a.JWT.Secret, auth.Claims{Role: req.Role, Subject: req.User, Info: req.Info,
		Publish: req.Publish, Subscribe: req.Subscribe, Presence: req.Presence, Expires: exp})
	if err != nil {
		return nil, err // the key was validated: an internal error
	}
	return &TokenAnswer{Token: tok, ExpiresAt: exp.Unix()}, nil
}

// tokenTTL returns the lifetime asked, in seconds (0: the default, or the
// limit when it is shorter), refused past limit.
func tokenTTL(secs int64, limit time.Duration) (time.Duration, error) {
	switch {
	case secs == 0:
		return min(DefaultTokenTTL, limit), nil
	case secs < 0:
		return 0, invalid(`field "ttl" must be a positive number of seconds`)
	case secs > int64(limit/time.Second):
		return 0, invalid(`field "ttl" is past the app's token_max_ttl of ` + itoa(int64(limit/time.Second)) + " seconds")
	}
	return time.Duration(secs) * time.Second, nil
}

// checkGrant refuses what an edge would refuse of the token: an unknown
// role, a bad pattern, a long user id, large info.
func checkGrant(a *app.App, req *tokenRequest) error {
	if _, ok := a.Role(req.Role); req.Role != "" && !ok {
		return invalid("role " + quote(req.Role) + " is not one of the app's")
	}
	own := app.Permissions{Publish: req.Publish, Subscribe: req.Subscribe, Presence: req.Presence}
	if err := own.Validate(); err != nil {
		return invalid("a granted channel pattern is invalid: " + err.Error())
	}
	if len(req.User) > rtm.MaxUserIDLen {
		return invalid(`field "user" is longer than ` + itoa(rtm.MaxUserIDLen) + " bytes")
	}
	if len(req.Info) > auth.MaxInfoBytes {
		return invalid(`field "info" is larger than ` + itoa(auth.MaxInfoBytes) + " bytes of JSON")
	}
	return nil
}
