//go:build !js

package websocket

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestAcceptDeflateOffers checks the server's answer to the
// permessage-deflate offers of RFC 7692 section 7.1: an acceptable offer
// is answered with no context takeover both ways, an offer it cannot
// honour or does not understand is declined (the next one is tried), and
// the handshake succeeds either way.
func TestAcceptDeflateOffers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		offer string // the Sec-WebSocket-Extensions line; "" sends none
		off   bool   // the server has no DeflateOptions
		want  bool   // deflate negotiated
	}{
		{name: "no offer", offer: "", want: false},
		{name: "bare", offer: "permessage-deflate", want: true},
		{name: "browser", offer: "permessage-deflate; client_max_window_bits", want: true},
		{name: "client window", offer: "permessage-deflate; client_max_window_bits=10", want: true},
		{name: "quoted window", offer: `permessage-deflate; client_max_window_bits="12"`, want: true},
		{name: "both no takeover", offer: "permessage-deflate; server_no_context_takeover; client_no_context_takeover", want: true},
		{name: "server window 15", offer: "permessage-deflate; server_max_window_bits=15", want: true},
		{name: "upper case", offer: "Permessage-Deflate; Client_Max_Window_Bits", want: true},
		{name: "server window 10: declined", offer: "permessage-deflate; server_max_window_bits=10", want: false},
		{name: "then a plain offer", offer: "permessage-deflate; server_max_window_bits=10, permessage-deflate", want: true},
		{name: "after another extension", offer: "x-webkit-deflate-frame, permessage-deflate", want: true},
		{name: "window 16", offer: "permessage-deflate; client_max_window_bits=16", want: false},
		{name: "window 7", offer: "permessage-deflate; client_max_window_bits=7", want: false},
		{name: "leading zero", offer: "permessage-deflate; client_max_window_bits=09", want: false},
		{name: "server window without value", offer: "permessage-deflate; server_max_window_bits", want: false},
		{name: "no takeover with a value", offer: "permessage-deflate; server_no_context_takeover=1", want: false},
		{name: "repeated parameter", offer: "permessage-deflate; client_no_context_takeover; client_no_context_takeover", want: false},
		{name: "unknown parameter", offer: "permessage-deflate; mystery", want: false},
		{name: "other extension only", offer: "x-webkit-deflate-frame", want: false},
		{name: "malformed", offer: "permessage-deflate;", want: false},
		{name: "unterminated quote", offer: `permessage-deflate; client_max_window_bits="10`, want: false},
		{name: "server without deflate", offer: "permessage-deflate", off: true, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := &AcceptOptions{Deflate: &DeflateOptions{}}
			if tt.off {
				opts.Deflate = nil
			}
			s := newAcceptServer(t, opts)
			extra := ""
			if tt.offer != "" {
				extra = "Sec-WebSocket-Extensions: " + tt.offer + "\r\n"
			}
			resp, _, _ := roundTrip(t, s.addr(), upgradeRequest(s.addr(), extra), nil)
			if resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("handshake answered %s", resp.Status)
			}
			c := s.conn(t)
			got := resp.Header.Values("Sec-WebSocket-Extensions")
			if !tt.want {
				if len(got) != 0 {
					t.Errorf("answer %q, want none", got)
				}
			} else if len(got) != 1 || got[0] != "permessage-deflate; server_no_context_takeover; client_no_context_takeover" {
				t.Errorf("answer %q, want permessage-deflate without context takeover", got)
			}
			if _, on := c.Deflate(); on != tt.want {
				t.Errorf("Deflate() on = %v, want %v", on, tt.want)
			}
		})
	}
}

// TestDialDeflateAnswers checks how a client that offered
// permessage-deflate (or did not) takes the server's answer: RFC 6455
// section 4.1 and RFC 7692 section 7.1 fail the handshake on an
// extension or parameter that was not offered, and this client needs the
// server to drop its context after each message.
func TestDialDeflateAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		offer   bool
		answer  string
		want    bool // deflate on
		wantErr string
	}{
		{name: "declined", offer: true, answer: "", want: false},
		{name: "accepted", offer: true, answer: "permessage-deflate; server_no_context_takeover; client_no_context_takeover", want: true},
		{name: "server takeover dropped only", offer: true, answer: "permessage-deflate; server_no_context_takeover", want: true},
		{name: "smaller server window", offer: true, answer: "permessage-deflate; server_no_context_takeover; server_max_window_bits=10", want: true},
		{name: "server keeps context", offer: true, answer: "permessage-deflate", wantErr: "lacks server_no_context_takeover"},
		{name: "client window not offered", offer: true, answer: "permessage-deflate; server_no_context_takeover; client_max_window_bits=10", wantErr: "not offered"},
		{name: "bad server window", offer: true, answer: "permessage-deflate; server_no_context_takeover; server_max_window_bits=20", wantErr: "not 8 to 15"},
		{name: "repeated parameter", offer: true, answer: "permessage-deflate; server_no_context_takeover; server_no_context_takeover", wantErr: "repeated"},
		{name: "two extensions", offer: true, answer: "permessage-deflate; server_no_context_takeover, permessage-deflate; server_no_context_takeover", wantErr: "not offered"},
		{name: "other extension", offer: true, answer: "x-webkit-deflate-frame", wantErr: "not offered"},
		{name: "not offered", offer: false, answer: "permessage-deflate; server_no_context_takeover", wantErr: "not offered"},
		{name: "malformed", offer: true, answer: "permessage-deflate;;", wantErr: "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			offers := make(chan string, 1)
			addr := rawServer(t, func(nc net.Conn, br *bufio.Reader) {
				_, _ = answerUpgrade(nc, br, func(req *http.Request, h http.Header) {
					offers <- req.Header.Get("Sec-WebSocket-Extensions")
					if tt.answer != "" {
						h.Set("Sec-WebSocket-Extensions", tt.answer)
					}
				})
			})
			opts := &DialOptions{}
			if tt.offer {
				opts.Deflate = &DeflateOptions{}
			}
			ctx, cancel := contextWithTestTimeout()
			defer cancel()
			c, err := Dial(ctx, "ws://"+addr+"/ws", opts)
			offer := <-offers
			if want := map[bool]string{true: deflateOffer, false: ""}[tt.offer]; offer != want {
				t.Errorf("offer %q, want %q", offer, want)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Dial error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer c.CloseNow()
			if _, on := c.Deflate(); on != tt.want {
				t.Errorf("Deflate() on = %v, want %v", on, tt.want)
			}
		})
	}
}
