package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	"golang.org/x/time/rate"

	"github.com/sluicehq/sluice/edge/peerlimit"
	"github.com/sluicehq/sluice/edge/stream"
	"github.com/sluicehq/sluice/shared/rtm"
)

// publishOnce serves a POST of PathPublish: one publish with the
// client's credentials (a JWT as bearer), made by a session the edge
// runs for the request, so that permissions, message size and the
// publish options are checked as over a WebSocket; the response is the
// rtm/publish reply's body (stream.PublishEncoder). The request rate is
// bounded per address as a connection's is (peerRates).
func (s *Server) publishOnce(w http.ResponseWriter, r *http.Request) {
	if !s.originOK(w, r) {
		return
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodOptions:
		s.preflight(w, r)
		return
	default:
		s.RefuseRequest(w, r, http.StatusMethodNotAllowed, string(rtm.CodeInvalidOperation), "publish with POST")
		return
	}
	a, ok := s.apps[r.URL.Query().Get("appkey")]
	if !ok {
		s.RefuseRequest(w, r, http.StatusUnauthorized, string(rtm.CodeInvalidAppkey), "unknown appkey")
		return
	}
	if !s.pubRates.allow(peerlimit.Peer(r.RemoteAddr), s.limits.RequestsPerSecond, s.limits.RequestBurst) {
		s.RefuseRequest(w, r, http.StatusTooManyRequests, string(rtm.CodeTooManyRequests), "too many requests from this address; slow down")
		return
	}
	body, err := readBody(w, r, int64(maxPDU(a)))
	if err != nil {
		s.RefuseRequest(w, r, http.StatusRequestEntityTooLarge, string(rtm.CodeMessageTooLarge), err.Error())
		return
	}
	if b := bytes.TrimSpace(body); len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		s.RefuseRequest(w, r, http.StatusBadRequest, string(rtm.CodeInvalidFormat), `the body is the JSON body of rtm/publish: {"channel": ..., "message": ...}`)
		return
	}
	token := bearer(r)
	replies := 1
	if token != "" {
		replies++
	}
	t, ok := s.openPlainStream(w, r, stream.NewPublishEncoder(replies))
	if !ok {
		return
	}
	var frames []byte
	if token != "" {
		frames = stream.AppendRequest(frames, authRequest(token))
	}
	pdu := append([]byte(`{"action":"rtm/publish","id":"publish","body":`), body...)
	frames = stream.AppendRequest(frames, append(pdu, '}'))
	if err := injectNow(t, frames); err != nil {
		s.log.Debug("publish ended before its request", "remote", r.RemoteAddr, "err", err)
	}
}

// authRequest is the auth/authenticate PDU of a JWT.
func authRequest(token string) []byte {
	p, _ := json.Marshal(map[string]any{"action": "auth/authenticate", "id": "auth",
		"body": map[string]any{"method": rtm.MethodJWT, "credentials": map[string]string{"token": token}}})
	return p
}

// maxPeerRates is how many addresses' buckets peerRates keeps before it
// drops the full ones (those of clients that have stopped).
const maxPeerRates = 4096

// peerRates are the request buckets of clients that publish by one-shot
// POSTs, per address: such a client holds no connection to keep a bucket
// in, so the address stands for it, with a connection's rate and burst.
type peerRates struct {
	mu    sync.Mutex // guards the fields below
	peers map[string]*rate.Limiter
	sweep int // the size at which full buckets are dropped
}

// allow takes a token of peer's bucket, and reports whether there was one.
func (p *peerRates) allow(peer string, rps, burst int) bool {
	if rps <= 0 {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.peers[peer]
	if l == nil {
		if p.peers == nil {
			p.peers, p.sweep = make(map[string]*rate.Limiter), maxPeerRates
		}
		if len(p.peers) >= p.sweep {
			for k, b := range p.peers {
				if b.Tokens() >= float64(b.Burst()) {
					delete(p.peers, k)
				}
			}
			p.sweep = max(maxPeerRates, 2*len(p.peers))
		}
		l = rate.NewLimiter(rate.Limit(rps), max(burst, 1))
		p.peers[peer] = l
	}
	return l.Allow()
}
