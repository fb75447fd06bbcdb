package session

import (
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/shared/rtm"
)

// The dead man's switches themselves are edge/deadman's; the server
// arms them on publishes with ttl (rtmopts.go) and disarms them on
// purges.

// ttlPayload encodes a ttl_message as a publish's message, refused as a
// publish's would be.
func (c *Session) ttlPayload(msg any) ([]byte, error) {
	p, size, err := payload.Encode(nil, msg, c.CodecIndex(), c.edge.Codecs.Codecs(c.CodecIndex()))
	if err != nil {
		if _, ok := rtm.AsError(err); ok {
			return nil, err
		}
		return nil, rtm.Errorf(rtm.CodeInvalidFormat, "ttl_message cannot be encoded")
	}
	if max := c.app.MaxMessage(); size > max {
		return nil, rtm.Errorf(rtm.CodeMessageTooLarge, "ttl_message is %d bytes; this app's limit is %d", size, max)
	}
	return p, nil
}
