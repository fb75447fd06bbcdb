package tls

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sluicehq/sluice/internal/syncbuf"
	"github.com/sluicehq/sluice/internal/testcert"
)

func TestOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *Options
		want error
		text string
	}{
		{name: "nil", opts: nil, want: ErrNoCertificate},
		{name: "empty", opts: &Options{}, want: ErrNoCertificate},
		{name: "both", opts: &Options{Domains: []string{"a.example.com"}, CertFile: "c", KeyFile: "k"}, want: ErrBothSources},
		{name: "cert without key", opts: &Options{CertFile: "c"}, text: "needs its key"},
		{name: "no challenge", opts: &Options{Domains: []string{"a.example.com"}, DisableHTTPChallenge: true, DisableTLSALPNChallenge: true}, want: ErrNoChallenge},
		{name: "bad domain", opts: &Options{Domains: []string{"localhost"}}, text: "not a fully qualified name"},
		{name: "ok acme", opts: &Options{Domains: []string{"edge.example.com"}}},
		{name: "ok files", opts: &Options{CertFile: "c", KeyFile: "k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Check()
			switch {
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("Check() = %v, want %v", err, tc.want)
			case tc.text != "" && (err == nil || !strings.Contains(err.Error(), tc.text)):
				t.Fatalf("Check() = %v, want an error containing %q", err, tc.text)
			case tc.want == nil && tc.text == "" && err != nil:
				t.Fatalf("Check() = %v, want nil", err)
			}
		})
	}
}

func TestCheckDomain(t *testing.T) {
	for _, tc := range []struct {
		name, domain, text string
	}{
		{name: "ok", domain: "edge.example.com"},
		{name: "ok hyphen digits", domain: "edge-1.eu2.example.com"},
		{name: "empty", domain: "", text: "empty"},
		{name: "single label", domain: "localhost", text: "not a fully qualified"},
		{name: "wildcard", domain: "*.example.com", text: "dns-01"},
		{name: "ip", domain: "192.0.2.1", text: "IP address"},
		{name: "underscore", domain: "a_b.example.com", text: "character"},
		{name: "leading hyphen", domain: "-a.example.com", text: "bad label"},
		{name: "empty label", domain: "a..example.com", text: "bad label"},
		{name: "too long", domain: strings.Repeat("a.", 130) + "com", text: "longer than 253"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckDomain(tc.domain)
			if tc.text == "" && err != nil || tc.text != "" && (err == nil || !strings.Contains(err.Error(), tc.text)) {
				t.Fatalf("CheckDomain(%q) = %v, want %q", tc.domain, err, tc.text)
			}
		})
	}
}

func TestDefaultCertDir(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	if got := DefaultCertDir(); got != "/data/sluice/certs" {
		t.Fatalf("with XDG_DATA_HOME: %q", got)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/ops")
	if got := DefaultCertDir(); got != "/home/ops/.local/share/sluice/certs" {
		t.Fatalf("without XDG_DATA_HOME: %q", got)
	}
}

func TestOperatorCertificateReloads(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := testcert.SelfSigned(t, dir, "edge.example.com", 1)
	m, err := New(&Options{CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer m.Close()
	select {
	case <-m.Ready():
	default:
		t.Fatal("an operator's certificate is ready at once")
	}
	clock := time.Now()
	m.static.now = func() time.Time { return clock }
	serial := func() int64 {
		c, err := m.TLSConfig().GetCertificate(&tls.ClientHelloInfo{ServerName: "edge.example.com"})
		if err != nil {
			t.Fatal(err)
		}
		return c.Leaf.SerialNumber.Int64()
	}
	if s := serial(); s != 1 {
		t.Fatalf("serial %d, want 1", s)
	}

	testcert.SelfSigned(t, dir, "edge.example.com", 2)
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(certFile, future, future); err != nil {
		t.Fatal(err)
	}
	if s := serial(); s != 1 {
		t.Fatalf("serial %d before the next check, want 1 still", s)
	}
	clock = clock.Add(staticCheckEvery)
	if s := serial(); s != 2 {
		t.Fatalf("serial %d after the files changed, want 2", s)
	}

	// A broken file keeps the certificate already loaded.
	os.WriteFile(keyFile, []byte("not a key"), 0o600)
	os.Chtimes(keyFile, future.Add(time.Hour), future.Add(time.Hour))
	clock = clock.Add(staticCheckEvery)
	if s := serial(); s != 2 {
		t.Fatalf("serial %d after a bad key file, want 2 kept", s)
	}
	if certs := m.Certificates(); len(certs) != 1 || certs[0].Name != "edge.example.com" {
		t.Fatalf("Certificates() = %v", certs)
	}
}

func TestOperatorCertificateErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(&Options{CertFile: filepath.Join(dir, "missing.pem"), KeyFile: filepath.Join(dir, "k.pem")}); err == nil {
		t.Fatal("New with a missing file: nil error")
	}
	certFile, _ := testcert.SelfSigned(t, dir, "edge.example.com", 1)
	if _, err := New(&Options{CertFile: certFile, KeyFile: certFile}); err == nil {
		t.Fatal("New with a certificate as its key: nil error")
	}
}

func TestStorageLock(t *testing.T) {
	st, err := newStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := st.lockingStorage.(*fileStorage).Path
	other, err := newStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.Lock(ctx, "issue_cert_a"); err != nil {
		t.Fatal(err)
	}
	if ok, err := other.TryLock(ctx, "issue_cert_a"); ok || err != nil {
		t.Fatalf("TryLock of a held lock = %v, %v; want false, nil", ok, err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := other.Lock(short, "issue_cert_a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock of a held lock until the deadline = %v", err)
	}
	got := make(chan error, 1)
	go func() { got <- other.Lock(ctx, "issue_cert_a") }()
	if err := st.Unlock(ctx, "issue_cert_a"); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	if err := other.Unlock(ctx, "issue_cert_a"); err != nil {
		t.Fatal(err)
	}
	if err := other.Unlock(ctx, "issue_cert_a"); err == nil {
		t.Fatal("Unlock of a lock not held: nil error")
	}
}

// TestStorageClosed: once closed, the storage creates nothing (a renewal
// certmagic still runs after the manager's Close), and says why.
func TestStorageClosed(t *testing.T) {
	dir := t.TempDir()
	st, err := newStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.Store(ctx, "certificates/a/a.crt", []byte("before")); err != nil {
		t.Fatal(err)
	}
	st.close()
	for name, err := range map[string]error{
		"Store": st.Store(ctx, "certificates/b/b.crt", []byte("after")),
		"Lock":  st.Lock(ctx, "issue_cert_b"),
	} {
		if !errors.Is(err, errStorageClosed) {
			t.Errorf("%s after close = %v, want %v", name, err, errStorageClosed)
		}
	}
	if ok, err := st.TryLock(ctx, "issue_cert_b"); ok || !errors.Is(err, errStorageClosed) {
		t.Errorf("TryLock after close = %v, %v", ok, err)
	}
	if b, err := st.Load(ctx, "certificates/a/a.crt"); err != nil || string(b) != "before" {
		t.Errorf("Load after close = %q, %v; reads still work", b, err)
	}
	// A renewal cut short by Close still removes its challenge token.
	if err := st.Delete(ctx, "certificates/a/a.crt"); err != nil || st.Exists(ctx, "certificates/a/a.crt") {
		t.Errorf("Delete after close = %v; deletes still work", err)
	}
	for _, p := range []string{"certificates/b", "locks"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after close (%v)", p, err)
		}
	}
}

func TestZapToSlog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	z := zapLogger(log).Named("obtain").With(zap.String("identifier", "edge.example.com"))
	z.Debug("hidden")
	z.Info("certificate obtained", zap.Int("attempt", 2), zap.Duration("elapsed", time.Second))
	z.Error("failed", zap.Error(errors.New("boom")))
	out := buf.String()
	for _, want := range []string{
		`level=INFO msg="certificate obtained"`, "identifier=edge.example.com", "logger=obtain",
		"attempt=2", "elapsed=1s", `level=ERROR msg=failed`, "error=boom",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hidden") {
		t.Errorf("debug entry logged at info level:\n%s", out)
	}
}

// TestCertFilesReload: a CertFiles serves both sides of a handshake the
// pair last loaded, and takes the renewed files at the next check once
// its check passes them; a renewal it refuses is logged and not served.
func TestCertFilesReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := testcert.SelfSigned(t, dir, "n1.example.com", 1)
	refuse := func(c *tls.Certificate) error {
		if c.Leaf.SerialNumber.Int64() == 3 {
			return errors.New("serial 3 is not for routes")
		}
		return nil
	}
	var logs syncbuf.Buffer
	c, err := LoadCertFiles(certFile, keyFile, refuse, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatalf("LoadCertFiles: %v", err)
	}
	clock := time.Now()
	c.s.now = func() time.Time { return clock }
	serials := func() (server, client int64) {
		sc, err := c.GetCertificate(&tls.ClientHelloInfo{})
		if err != nil {
			t.Fatal(err)
		}
		cc, err := c.GetClientCertificate(&tls.CertificateRequestInfo{})
		if err != nil {
			t.Fatal(err)
		}
		return sc.Leaf.SerialNumber.Int64(), cc.Leaf.SerialNumber.Int64()
	}
	renew := func(serial int64, at time.Time) {
		testcert.SelfSigned(t, dir, "n1.example.com", serial)
		if err := os.Chtimes(certFile, at, at); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(staticCheckEvery)
	}
	if s, cl := serials(); s != 1 || cl != 1 {
		t.Fatalf("serials %d, %d, want 1, 1", s, cl)
	}
	renew(2, time.Now().Add(time.Hour))
	if s, cl := serials(); s != 2 || cl != 2 {
		t.Fatalf("serials %d, %d after the files changed, want 2, 2", s, cl)
	}
	if !strings.Contains(logs.String(), "certificate reloaded") {
		t.Errorf("the reload was not logged: %q", logs.String())
	}
	renew(3, time.Now().Add(2*time.Hour))
	if s, cl := serials(); s != 2 || cl != 2 {
		t.Fatalf("serials %d, %d after a renewal the check refuses, want 2, 2 kept", s, cl)
	}
	if !strings.Contains(logs.String(), "serial 3 is not for routes") {
		t.Errorf("the refused renewal was not logged: %q", logs.String())
	}
	if _, err := LoadCertFiles(filepath.Join(dir, "missing.pem"), keyFile, nil, nil); err == nil {
		t.Fatal("LoadCertFiles with a missing file: nil error")
	}
	if _, err := LoadCertFiles(certFile, keyFile, func(*tls.Certificate) error { return errors.New("no") }, nil); err == nil {
		t.Fatal("LoadCertFiles with a pair its check refuses: nil error")
	}
}
