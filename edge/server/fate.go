package server

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// backendRefusal maps err, a backend publish's through the journal, to
// the server API's error: as session.Edge.LogRefusal, and with what an idempotency key
// (id, "" if none) makes safe.
func (s *Server) backendRefusal(err error, id string) *rtm.Error {
	e := s.edge.LogRefusal(err, "backend publish")
	if e.Code != rtm.CodeUnavailable || errors.Is(err, store.ErrNotStored) {
		return e
	}
	if id != "" {
		// The log stored it, if it did, at most a request's deadline
		// before this answer: its Msg-Id is remembered the rest of the
		// window.
		w := s.edge.ChanLog.Windows()
		e.Reason += fmt.Sprintf(". Publishing it again with the same idempotency_key within %v stores it at most once "+
			"and answers its position", w.Duplicates-w.Request)
	} else {
		e.Reason += ". Publishing it again may store it twice: send an idempotency_key to retry safely"
	}
	return e
}
