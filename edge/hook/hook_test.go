package hook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testSecret = "0123456789abcdef-secret"

// backend is a real HTTP server answering hook calls with answer (a JSON
// text), checking every request's signature.
func backend(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, body []byte)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(backendHandler(t, answer))
	t.Cleanup(srv.Close)
	return srv
}

// backendHandler is backend's handler.
func backendHandler(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, body []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := Verify(testSecret, r.Header.Get(SignatureHeader), body, time.Now(), 0); err != nil {
			t.Errorf("request signature: %v", err)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		answer(w, r, body)
	})
}

func newHooks(t *testing.T, cfg *Config) *Hooks {
	t.Helper()
	cfg.Secret = testSecret
	h, err := New("app", cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A backend left down would hold a patient Close forever: at the end
	// of a test whatever is still queued is abandoned.
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		h.Close(ctx)
	})
	return h
}

func TestConnectHook(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		answer    func(w http.ResponseWriter, r *http.Request, body []byte)
		onFailure Failure
		allow     bool
		failed    bool
		user      string
		reason    string
	}{
		{name: "allows", allow: true, user: "alice", answer: func(w http.ResponseWriter, _ *http.Request, body []byte) {
			var req ConnectRequest
			if err := json.Unmarshal(body, &req); err != nil || req.Token != "tok" || req.Cookies["session"] != "s1" {
				t.Errorf("connect request %s: %v", body, err)
			}
			_, _ = w.Write([]byte(`{"allow":true,"user":"alice","role":"admin","info":{"name":"Alice"},"future":1}`))
		}},
		{name: "denies", reason: "banned", answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			_, _ = w.Write([]byte(`{"allow":false,"reason":"banned"}`))
		}},
		{name: "times out, deny", failed: true, reason: failReason(HookConnect), answer: hang},
		{name: "times out, allow", onFailure: FailAllow, allow: true, failed: true, answer: hang},
		{name: "fails with 500", failed: true, reason: failReason(HookConnect), answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}},
		{name: "answers no allow", failed: true, reason: failReason(HookConnect), answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			_, _ = w.Write([]byte(`{"user":"x"}`))
		}},
		{name: "answers role and permissions", failed: true, reason: failReason(HookConnect), answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			_, _ = w.Write([]byte(`{"allow":true,"role":"a","permissions":{"publish":["*"]}}`))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := backend(t, tt.answer)
			h := newHooks(t, &Config{Connect: srv.URL, Timeout: 50 * time.Millisecond, OnFailure: tt.onFailure})
			a, err := h.Connect(context.Background(), &ConnectRequest{Appkey: "app", Connection: "c1", Token: "tok",
				Cookies: map[string]string{"session": "s1"}})
			if (err != nil) != tt.failed {
				t.Fatalf("err = %v, want failed=%v", err, tt.failed)
			}
			if a.Allow != tt.allow || a.User != tt.user || a.Reason != tt.reason {
				t.Fatalf("answer = %+v, want allow=%v user=%q reason=%q", a, tt.allow, tt.user, tt.reason)
			}
			st := h.Stats().Hooks[0]
			if tt.failed && st.Failed != 1 || !tt.failed && st.Allowed+st.Denied != 1 {
				t.Fatalf("stats = %+v", st)
			}
		})
	}
}

func TestPublishHookReplaces(t *testing.T) {
	t.Parallel()
	srv := backend(t, func(w http.ResponseWriter, _ *http.Request, body []byte) {
		var req PublishRequest
		if err := json.Unmarshal(body, &req); err != nil {
			t.Error(err)
		}
		switch req.Channel {
		case "censored":
			_, _ = w.Write([]byte(`{"allow":true,"message":{"text":"***"}}`))
		case "closed":
			_, _ = w.Write([]byte(`{"allow":false,"reason":"room closed"}`))
		default:
			_, _ = w.Write([]byte(`{"allow":true}`))
		}
	})
	h := newHooks(t, &Config{Publish: srv.URL, Subscribe: srv.URL})
	for _, tt := range []struct {
		channel, message string
		allow            bool
	}{{"censored", `{"text":"***"}`, true}, {"closed", ``, false}, {"open", ``, true}} {
		a, err := h.Publish(context.Background(), &PublishRequest{Channel: tt.channel, Message: json.RawMessage(`{"text":"bad"}`)})
		if err != nil || a.Allow != tt.allow || string(a.Message) != tt.message {
			t.Errorf("%s: answer %+v, %v; want allow %v message %q", tt.channel, a, err, tt.allow, tt.message)
		}
	}
	// A subscribe hook's answer never replaces anything.
	a, err := h.Subscribe(context.Background(), &SubscribeRequest{Channel: "censored"})
	if err != nil || !a.Allow || a.Message != nil {
		t.Fatalf("subscribe answer %+v, %v", a, err)
	}
}

func TestNoHooks(t *testing.T) {
	t.Parallel()
	h, err := New("app", &Config{}, nil)
	if err != nil || h != nil {
		t.Fatalf("New without URLs = %v, %v; want nil, nil", h, err)
	}
	a, err := h.Connect(context.Background(), &ConnectRequest{})
	if err != nil || !a.Allow {
		t.Fatalf("nil hooks' connect = %+v, %v", a, err)
	}
	if err := h.Events().Post(KindDisconnect, DisconnectData{}); err != nil {
		t.Fatalf("nil events' Post = %v", err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		cfg  Config
		want error
	}{
		{"no secret", Config{Connect: "http://a/"}, ErrNoSecret},
		{"short secret", Config{Connect: "http://a/", Secret: "short"}, ErrNoSecret},
		{"relative URL", Config{Connect: "/hook", Secret: testSecret}, ErrBadURL},
		{"ftp URL", Config{Events: EventsConfig{URL: "ftp://a/"}, Secret: testSecret}, ErrBadURL},
		{"long timeout", Config{Connect: "http://a/", Secret: testSecret, Timeout: time.Minute}, ErrTimeout},
		{"on_failure", Config{Connect: "http://a/", Secret: testSecret, OnFailure: "maybe"}, ErrOnFailure},
		{"kind", Config{Events: EventsConfig{URL: "http://a/", Kinds: []string{"connect"}}, Secret: testSecret}, ErrBadKind},
		{"negative queue", Config{Events: EventsConfig{URL: "http://a/", Queue: -1}, Secret: testSecret}, ErrNegative},
		{"fine", Config{Publish: "https://a/p", Secret: testSecret, OnFailure: FailAllow}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); !errors.Is(err, tt.want) {
				t.Fatalf("Validate = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"events":[]}`)
	sig := Sign(testSecret, now, body)
	for _, tt := range []struct {
		name, secret, header string
		body                 []byte
		at                   time.Time
		want                 error
	}{
		{"good", testSecret, sig, body, now.Add(time.Minute), nil},
		{"other body", testSecret, sig, []byte(`{"events":[1]}`), now, ErrSignatureWrong},
		{"other secret", "another-secret-of-16", sig, body, now, ErrSignatureWrong},
		{"stale", testSecret, sig, body, now.Add(time.Hour), ErrSignatureStale},
		{"garbage", testSecret, "v1=zz", body, now, ErrSignatureFormat},
		{"empty", testSecret, "", body, now, ErrSignatureFormat},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := Verify(tt.secret, tt.header, tt.body, tt.at, 0); !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

// hang answers nothing until the edge gives up on the request.
func hang(_ http.ResponseWriter, r *http.Request, _ []byte) { <-r.Context().Done() }
