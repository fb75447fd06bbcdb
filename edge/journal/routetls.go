package journal

import (
	"crypto/tls"
	"errors"
	"time"
)

// routeTLSTimeout bounds a route's TLS handshake. NATS's default (2 s)
// is meant for a LAN; a route between regions, or to a node busy
// replaying its stream, can take longer to answer a full handshake, and
// a route that times out only comes back at the next retry.
const routeTLSTimeout = 5 * time.Second

// routeTLSConfig returns the TLS configuration of a node's routes, made
// from the caller's: NATS uses one tls.Config to dial routes (as a TLS
// client, verifying the peer against RootCAs) and to accept them (as a
// server, verifying the peer against ClientCAs). Both pools are the
// cluster's CA, and a peer without a certificate is refused, so that a
// route is verified in both directions whoever dialled it; this is what
// nats-server's own cluster tls block does (getTLSConfig in its opts.go).
func routeTLSConfig(in *tls.Config) (*tls.Config, error) {
	switch {
	case len(in.Certificates) == 0 && (in.GetCertificate == nil || in.GetClientCertificate == nil):
		// A route is dialled by one node and accepted by the other: the
		// node needs its certificate on both sides.
		return nil, errors.New("journal: route TLS: no certificate for this node (Certificates, or both GetCertificate and GetClientCertificate)")
	case in.GetConfigForClient != nil:
		// The configuration it returns replaces this one for a route that
		// dials in, client certificate requirement and CAs included.
		return nil, errors.New("journal: route TLS: GetConfigForClient would bypass the routes' verification")
	case in.RootCAs == nil && in.ClientCAs == nil:
		// Nil RootCAs means the system's roots: any certificate a public
		// CA issued for the dialled name would pass as a cluster node.
		return nil, errors.New("journal: route TLS: no cluster CA to verify the other nodes with (RootCAs)")
	case in.InsecureSkipVerify:
		return nil, errors.New("journal: route TLS: InsecureSkipVerify would take any node that dials in")
	}
	c := in.Clone()
	if c.RootCAs == nil {
		c.RootCAs = c.ClientCAs
	}
	if c.ClientCAs == nil {
		c.ClientCAs = c.RootCAs
	}
	c.ClientAuth = tls.RequireAndVerifyClientCert
	c.MinVersion = max(c.MinVersion, tls.VersionTLS12)
	return c, nil
}
