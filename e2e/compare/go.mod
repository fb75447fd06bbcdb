module github.com/sluicehq/sluice/e2e/compare

go 1.26.0

require (
	github.com/centrifugal/centrifuge-go v0.12.1
	github.com/sluicehq/sluice v0.0.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
	github.com/centrifugal/protocol v0.21.0 // indirect
	github.com/fxamacker/cbor/v2 v2.10.0 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/jpillora/backoff v1.0.0 // indirect
	github.com/mailru/easyjson v0.9.2 // indirect
	github.com/planetscale/vtprotobuf v0.6.0 // indirect
	github.com/segmentio/asm v1.2.1 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/shadowspore/fossil-delta v0.0.0-20241213113458-1d797d70cbe3 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/sys v0.50.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

// The comparison measures the Sluice of this tree.
replace github.com/sluicehq/sluice => ../..
