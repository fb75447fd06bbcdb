package main

// sluice token: mints JWTs for the edge's jwt auth extension.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
	"github.com/sluicehq/sluice/edge/auth"
)

// listFlag collects channel patterns from repeated or comma-separated
// flags.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// runToken mints a JWT for the jwt auth extension and prints it.
func runToken(_ context.Context, args []string, s stdio) error {
	fs := newFlagSet("token", "token [flags]\n\n"+
		"Mints a JWT for the jwt auth extension (sluice pub --token ...). It is signed\n"+
		"with one of: --jwt-key, the app's jwt_key (an HMAC secret); --jwt-key-file, a\n"+
		"PEM private key whose public key is the app's jwt_key_file; or --config and\n"+
		"--appkey, to take the app's jwt_key from the edge's config file.", s)
	role := fs.String("role", "", "role the token grants (env SLUICE_ROLE)")
	var publish, subscribe, presence listFlag
	fs.Var(&publish, "publish", "channel patterns the token may publish to, on top of the role's (repeatable, comma-separated)")
	fs.Var(&subscribe, "subscribe", "channel patterns the token may subscribe to, on top of the role's (repeatable, comma-separated)")
	fs.Var(&presence, "presence", "channel patterns whose members the token may see, on top of the role's (repeatable, comma-separated)")
	info := fs.String("info", "", "JSON the channels' presence shows of the user (info claim), e.g. '{\"name\":\"Ann\"}'")
	ttl := fs.Duration("ttl", time.Hour, "how long the token is valid")
	subject := fs.String("subject", "", "who the token is for (sub claim: the user id presence shows; edges log it)")
	secret := fs.String("jwt-key", "", "HMAC secret of the app, 32 bytes or more (env SLUICE_JWT_KEY)")
	keyFile := fs.String("jwt-key-file", "", "PEM private key (RSA, ECDSA or Ed25519)")
	configPath := fs.String("config", "", "edge config file holding the app's jwt_key")
	appkey := fs.String("appkey", "", "app whose jwt_key --config provides (env SLUICE_APPKEY; default "+defaultAppkey+")")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	*role = firstOf(*role, os.Getenv("SLUICE_ROLE"))
	if *role == "" && len(publish) == 0 && len(subscribe) == 0 && len(presence) == 0 {
		return fmt.Errorf("%w: the token would grant nothing: set --role, --publish, --subscribe or --presence", errUsage)
	}
	var infoJSON json.RawMessage
	if *info != "" {
		if !json.Valid([]byte(*info)) {
			return fmt.Errorf("%w: --info is not JSON", errUsage)
		}
		infoJSON = json.RawMessage(*info)
	}
	if *ttl <= 0 {
		return fmt.Errorf("%w: --ttl must be positive", errUsage)
	}
	key, err := signingKey(*secret, *keyFile, *configPath, firstOf(*appkey, os.Getenv("SLUICE_APPKEY"), defaultAppkey))
	if err != nil {
		return err
	}
	now := time.Now()
	tok, err := auth.Mint(key, auth.Claims{
		Role: *role, Publish: publish, Subscribe: subscribe, Presence: presence,
		Expires: now.Add(*ttl), IssuedAt: now, Subject: *subject, Info: infoJSON,
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(s.out, tok)
	return err
}

// signingKey loads the key of `sluice token` from exactly one source; the
// environment's SLUICE_JWT_KEY counts only when no flag names one.
func signingKey(secret, keyFile, configPath, appkey string) (any, error) {
	n := 0
	for _, v := range []string{secret, keyFile, configPath} {
		if v != "" {
			n++
		}
	}
	if n == 0 {
		secret = os.Getenv("SLUICE_JWT_KEY")
		if secret == "" {
			return nil, fmt.Errorf("%w: no signing key: set --jwt-key, --jwt-key-file or --config", errUsage)
		}
	}
	if n > 1 {
		return nil, fmt.Errorf("%w: set only one of --jwt-key, --jwt-key-file and --config", errUsage)
	}
	switch {
	case keyFile != "":
		data, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, err
		}
		k, err := auth.ParsePrivateKeyPEM(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", keyFile, err)
		}
		return k, nil
	case configPath != "":
		// Read, not validated whole: the app's key is all a token needs,
		// and the edge may complete the file with flags (--data-dir), or
		// name files (route TLS keys) whoever mints tokens cannot read.
		cfg, err := edgecmd.ReadConfig(configPath)
		if err != nil {
			return nil, err
		}
		for _, a := range cfg.Apps {
			if a.Appkey != appkey {
				continue
			}
			if a.JWTKey == "" {
				return nil, fmt.Errorf("app %q in %s has no jwt_key (for a jwt_key_file, sign with --jwt-key-file and the private key)", appkey, configPath)
			}
			return []byte(a.JWTKey), nil
		}
		return nil, fmt.Errorf("no app %q in %s", appkey, configPath)
	}
	return []byte(secret), nil
}
