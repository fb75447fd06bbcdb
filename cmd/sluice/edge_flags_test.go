package main

import (
	"flag"
	"io"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
)

func TestOpsFlagsOverrideConfig(t *testing.T) {
	t.Parallel()
	c := edgecmd.DefaultConfig()
	c.TLS = edgecmd.TLSConfig{Domains: []string{"edge.example.com"}, Email: "ops@example.com", HTTPListen: "0.0.0.0:8080"}
	c.Admin.Listen = "127.0.0.1:9090"
	var o opsFlags
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.register(fs)
	err := fs.Parse([]string{"--domain", "x.example.com", "--domain", "y.example.com", "--email", "me@example.com",
		"--acme-ca", "https://ca.example/dir", "--acme-ca-root", "/r.pem", "--cert-dir", "/certs",
		"--http-listen", "off", "--admin-listen", "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	o.apply(c)
	if !reflect.DeepEqual(c.TLS.Domains, []string{"x.example.com", "y.example.com"}) || c.TLS.Email != "me@example.com" ||
		c.TLS.ACMECA != "https://ca.example/dir" || c.TLS.ACMECARoot != "/r.pem" || c.TLS.CertDir != "/certs" ||
		c.TLS.HTTPListen != "off" || c.Admin.Listen != "127.0.0.1:1" {
		t.Fatalf("after flags: tls %+v, admin %+v", c.TLS, c.Admin)
	}
}
