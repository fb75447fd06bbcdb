package rtm

// RawValue is a message value already encoded in the codec of the PDU that
// carries it. Codecs splice it into the frame verbatim, so the edge can
// reply with a stored message without decoding and re-encoding it.
type RawValue []byte
