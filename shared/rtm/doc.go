// Package rtm is the RTM v2 wire protocol as Sluice speaks it: the PDU
// envelope, the typed bodies of every request, reply and push, positions,
// channel-name rules and the protocol error type.
//
// It knows nothing of any encoding; the codecs in shared/codec turn these
// types into frames and back. It builds for linux and for js/wasm and imports
// nothing of Sluice's.
package rtm
