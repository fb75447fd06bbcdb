package codec

import "github.com/sluicehq/sluice/shared/rtm"

// The bodies of Satori's options (rtm/options.go) are rare next to plain
// publishes and acknowledgments, so they are written as a map of their
// fields through appendValue, which splices an rtm.RawValue (a stored
// message in the reply's codec) verbatim, rather than by hand or by the
// codec's library, which knows nothing of raw values.

// publishMap is a publish body with options as a map of its fields.
func publishMap(b *rtm.PublishBody) map[string]any {
	m := map[string]any{"channel": b.Channel, "message": b.Message}
	if b.Position != "" {
		m["position"] = b.Position
	}
	if b.TTL != nil {
		m["ttl"] = *b.TTL
		m["ttl_message"] = b.TTLMessage
	}
	if b.Read != "" {
		m["read"] = b.Read
	}
	if b.ExcludeSelf {
		m["exclude_self"] = true
	}
	return m
}

// previousMap is the previous message of a reply as a map, or nil.
func previousMap(p *rtm.Previous) map[string]any {
	if p == nil {
		return nil
	}
	return map[string]any{"message": p.Message, "position": p.Position}
}

// previousReplyMap is an ok reply with the previous message as a map.
func previousReplyMap(b *rtm.PreviousReply) map[string]any {
	m := map[string]any{}
	if b.Position != "" {
		m["position"] = b.Position
	}
	if b.Previous != nil {
		m["previous"] = previousMap(b.Previous)
	}
	return m
}

// previousErrorMap is an error reply with the previous message as a map.
func previousErrorMap(b *rtm.PreviousError) map[string]any {
	m := map[string]any{"error": b.Error, "reason": b.Reason}
	if b.Previous != nil {
		m["previous"] = previousMap(b.Previous)
	}
	return m
}
