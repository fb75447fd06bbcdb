package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Bounds of an answer's fields: a backend's answer lands in the edge's
// memory for a connection's life, so it is bounded as a client's request
// is.
const (
	MaxUserBytes     = 256
	MaxRoleBytes     = 256
	MaxReasonBytes   = 1024
	MaxInfoBytes     = 16 << 10
	MaxPatterns      = 256
	MaxPatternBytes  = 256
	maxFieldsMessage = "answer field %s is longer than %d bytes"
)

var errNoAllow = errors.New(`the answer is not a JSON object with a boolean "allow"`)

// decodeConnect decodes the connect hook's answer into a. Fields the edge
// does not know are ignored, so a backend can answer more than one
// edge version; "allow" is required.
func decodeConnect(b []byte, a *ConnectAnswer) error {
	var raw struct {
		Allow       *bool           `json:"allow"`
		Reason      string          `json:"reason"`
		User        string          `json:"user"`
		Role        string          `json:"role"`
		Permissions *Permissions    `json:"permissions"`
		Info        json.RawMessage `json:"info"`
	}
	if err := unmarshal(b, &raw); err != nil {
		return err
	}
	if raw.Allow == nil {
		return errNoAllow
	}
	*a = ConnectAnswer{Allow: *raw.Allow, Reason: cut(raw.Reason, MaxReasonBytes)}
	if !a.Allow {
		return nil
	}
	switch {
	case len(raw.User) > MaxUserBytes:
		return fmt.Errorf(maxFieldsMessage, "user", MaxUserBytes)
	case len(raw.Role) > MaxRoleBytes:
		return fmt.Errorf(maxFieldsMessage, "role", MaxRoleBytes)
	case len(raw.Info) > MaxInfoBytes:
		return fmt.Errorf(maxFieldsMessage, "info", MaxInfoBytes)
	case raw.Role != "" && raw.Permissions != nil:
		return errors.New(`the answer gives both "role" and "permissions"; give one`)
	}
	if p := raw.Permissions; p != nil {
		if err := checkPatterns("publish", p.Publish); err != nil {
			return err
		}
		if err := checkPatterns("subscribe", p.Subscribe); err != nil {
			return err
		}
	}
	if string(raw.Info) == "null" {
		raw.Info = nil
	}
	a.User, a.Role, a.Permissions, a.Info = raw.User, raw.Role, raw.Permissions, raw.Info
	return nil
}

func checkPatterns(name string, ps []string) error {
	if len(ps) > MaxPatterns {
		return fmt.Errorf("answer field permissions.%s lists more than %d patterns", name, MaxPatterns)
	}
	for _, p := range ps {
		if len(p) > MaxPatternBytes {
			return fmt.Errorf(maxFieldsMessage, "permissions."+name, MaxPatternBytes)
		}
	}
	return nil
}

// decodeAnswer decodes a subscribe or publish hook's answer; message is
// kept only for publish.
func decodeAnswer(b []byte, a *Answer, publish bool) error {
	var raw struct {
		Allow   *bool           `json:"allow"`
		Reason  string          `json:"reason"`
		Message json.RawMessage `json:"message"`
	}
	if err := unmarshal(b, &raw); err != nil {
		return err
	}
	if raw.Allow == nil {
		return errNoAllow
	}
	*a = Answer{Allow: *raw.Allow, Reason: cut(raw.Reason, MaxReasonBytes)}
	if publish && a.Allow {
		a.Message = raw.Message
	}
	return nil
}

// unmarshal decodes one JSON object, refusing invalid UTF-8 (which
// encoding/json would quietly turn into U+FFFD, rewriting user ids).
func unmarshal(b []byte, v any) error {
	if !utf8.Valid(b) {
		return errors.New("the answer is not valid UTF-8")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %w", errNoAllow, err)
	}
	return nil
}

// cut shortens s to at most n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
