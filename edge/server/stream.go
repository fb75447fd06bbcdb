package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/sluicehq/sluice/edge/hook"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/session"
	"github.com/sluicehq/sluice/edge/stream"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// The HTTP endpoints beside the WebSocket one, for clients that cannot
// open a WebSocket (edge/stream; docs/http-streaming.md).
const (
	// PathStream is a whole RTM session over HTTP: GET opens it as
	// Server-Sent Events, POST sends it the client's PDUs.
	PathStream = "/v2/stream"
	// PathSubscribe streams channels as Server-Sent Events or NDJSON.
	PathSubscribe = "/v2/subscribe"
	// PathPublish publishes one message.
	PathPublish = "/v2/publish"
)

// pduOverhead is what a PDU may carry beyond its message, as a
// session's read limit allows (edge/session's readOverhead).
const pduOverhead = 16 << 10

// maxPDU is the largest PDU a client of a may send: a session's read
// limit.
func maxPDU(a *session.App) int { return 2*a.MaxMessage() + pduOverhead }

// serveStream serves PathStream.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	if !s.originOK(w, r) {
		return
	}
	switch r.Method {
	case http.MethodGet:
		s.openStream(w, r)
	case http.MethodPost:
		s.postStream(w, r)
	case http.MethodOptions:
		s.preflight(w, r)
	default:
		s.RefuseRequest(w, r, http.StatusMethodNotAllowed, string(rtm.CodeInvalidOperation), "GET opens a stream, POST sends to one")
	}
}

// openStream opens a session stream: its first event names the stream
// (stream.OpenEvent), and from then on it carries every PDU the session
// writes.
func (s *Server) openStream(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("codec")
	cd, _ := payload.CodecFor(name)
	if name != "" && cd.Name() != name {
		s.RefuseRequest(w, r, http.StatusBadRequest, string(rtm.CodeInvalidFormat), "codec must be one of "+strings.Join(payload.Names(), ", "))
		return
	}
	t, a, id, grant, ok := s.openTunnel(w, r, stream.SessionEncoder{})
	if !ok {
		return
	}
	sid, err := s.streams.Add(a.Key, t, cd.Binary())
	if err == nil {
		err = t.Open(stream.ContentTypeSSE, stream.OpenEvent(sid, cd.Name()))
	}
	var ws *websocket.Conn
	if err == nil {
		ws, err = stream.Upgrade(t, name)
	}
	if err != nil {
		s.streams.Remove(sid)
		s.dropTunnel(t, err)
		return
	}
	s.startStream(ws, r, a, id, grant, func() { s.streams.Remove(sid) })
}

// openTunnel admits a connection attempt as the WebSocket endpoint does
// and takes its HTTP connection over, as a tunnel whose output enc
// encodes. On failure it has answered and left.
func (s *Server) openTunnel(w http.ResponseWriter, r *http.Request, enc stream.Encoder) (*stream.Tunnel, *session.App, string, *hook.ConnectAnswer, bool) {
	a, id, grant, ok := s.admit(w, r)
	if !ok {
		return nil, nil, "", nil, false
	}
	nc, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		// The server's request timeouts are not for a stream.
		err = nc.SetDeadline(time.Time{})
	}
	if err != nil {
		s.leave()
		if nc != nil {
			nc.Close()
		} else {
			s.RefuseRequest(w, r, http.StatusInternalServerError, string(rtm.CodeUnavailable), "cannot stream on this connection")
		}
		s.log.Warn("stream hijack failed", "remote", r.RemoteAddr, "err", err)
		return nil, nil, "", nil, false
	}
	t := stream.NewTunnel(nc, enc, 2*maxPDU(a))
	t.SetHeaders(s.corsLines(r), !r.ProtoAtLeast(1, 1))
	s.httpStreams.Add(1)
	s.httpStreamsTotal.Add(1)
	return t, a, id, grant, true
}

// openPlainStream is openTunnel, then the session of the tunnel's
// WebSocket started (in JSON) for a one-way stream (/v2/subscribe,
// /v2/publish) whose requests the caller then feeds in. On failure it
// has answered and left.
func (s *Server) openPlainStream(w http.ResponseWriter, r *http.Request, enc stream.Encoder) (*stream.Tunnel, bool) {
	t, a, id, grant, ok := s.openTunnel(w, r, enc)
	if !ok {
		return nil, false
	}
	ws, err := stream.Upgrade(t, "")
	if err != nil {
		s.dropTunnel(t, err)
		return nil, false
	}
	s.startStream(ws, r, a, id, grant, nil)
	return t, true
}

// startStream starts the session of a tunnel's WebSocket, as start does,
// and then ended (nil: nothing) once it is over.
func (s *Server) startStream(ws *websocket.Conn, r *http.Request, a *session.App, id string, grant *hook.ConnectAnswer, ended func()) {
	s.start(ws, r.RemoteAddr, a, id, grant, func() {
		s.httpStreams.Add(-1)
		if ended != nil {
			ended()
		}
	})
}

// dropTunnel ends a tunnel whose session could not start.
func (s *Server) dropTunnel(t *stream.Tunnel, err error) {
	s.log.Warn("stream could not start", "err", err)
	_ = t.Close()
	s.httpStreams.Add(-1)
	s.leave()
}

// postStream hands the PDUs of a POST to the session stream it names,
// all or none, and answers 204 once the session has them: its replies
// come on the stream, in order, as over a WebSocket. The POST waits
// while the session has a POST's worth unread, so a client that sends
// faster than its session serves it is slowed, not buffered for.
func (s *Server) postStream(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, ok := s.apps[q.Get("appkey")]
	if !ok {
		s.RefuseRequest(w, r, http.StatusUnauthorized, string(rtm.CodeInvalidAppkey), "unknown appkey")
		return
	}
	t, binary := s.streams.Get(a.Key, q.Get("stream"))
	if t == nil {
		s.RefuseRequest(w, r, http.StatusNotFound, codeUnknownStream, "no such stream: it has ended, or never was")
		return
	}
	frames, ok := s.readPDUs(w, r, a, binary)
	if !ok {
		return
	}
	if err := t.Inject(r.Context(), frames); err != nil {
		if errors.Is(err, stream.ErrClosed) {
			s.RefuseRequest(w, r, http.StatusNotFound, codeUnknownStream, "the stream has ended")
		}
		return // else the client went away
	}
	s.setCORS(w, r)
	w.WriteHeader(http.StatusNoContent)
}

// codeUnknownStream refuses a POST to a stream that is not open.
const codeUnknownStream = "unknown_stream"

// readPDUs reads and splits the body of a POST of a's client; on
// failure it has answered, and the session has seen none of it.
func (s *Server) readPDUs(w http.ResponseWriter, r *http.Request, a *session.App, binary bool) ([]byte, bool) {
	limit := maxPDU(a)
	body, err := readBody(w, r, int64(2*limit))
	if err == nil {
		var frames []byte
		if frames, err = stream.DecodeBody(body, binary, limit); err == nil {
			return frames, true
		}
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) || errors.Is(err, stream.ErrPDUTooLarge) {
		s.RefuseRequest(w, r, http.StatusRequestEntityTooLarge, string(rtm.CodeMessageTooLarge), err.Error())
	} else {
		s.RefuseRequest(w, r, http.StatusBadRequest, string(rtm.CodeInvalidFormat), err.Error())
	}
	return nil, false
}

// originOK refuses a browser request from an origin that may not open a
// WebSocket either; a request without Origin (not a browser's) passes.
func (s *Server) originOK(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Origin") == "" || websocket.OriginAllowed(r, s.acceptOptions()) {
		return true
	}
	Refuse(w, http.StatusForbidden, string(rtm.CodeAuthorizationDenied), "origin not allowed")
	return false
}

// corsLines are the CORS header lines of a stream's response head for
// r, which originOK let in.
func (s *Server) corsLines(r *http.Request) string {
	origin := r.Header.Get("Origin")
	if origin == "" || strings.ContainsAny(origin, "\r\n") {
		return ""
	}
	return "Access-Control-Allow-Origin: " + origin + "\r\nVary: Origin\r\n"
}

// setCORS lets the page of r's Origin, which originOK let in, read the
// answer.
func (s *Server) setCORS(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" {
		w.Header().Add("Vary", "Origin")
		w.Header().Set("Access-Control-Allow-Origin", origin)
	}
}

// preflight answers a CORS preflight of a POST (a binary body's content
// type, an Authorization header).
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	s.setCORS(w, r)
	w.Header().Set("Access-Control-Allow-Methods", "GET, POST")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization, Last-Event-ID")
	w.Header().Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// injectNow hands a tunnel the edge's own requests for its client; they
// never wait (the tunnel's queue is empty).
func injectNow(t *stream.Tunnel, frames []byte) error {
	return t.Inject(context.Background(), frames)
}
