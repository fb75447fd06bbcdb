package edgecmd

// maxDefaultConnections caps the derived connections default: the edge
// server's own default, for processes allowed a great many files.
const maxDefaultConnections = 100_000

// defaultConnections is the connections limit for a process that may open
// files descriptors, 0 when unknown (the server's default then). Every
// WebSocket is a descriptor; the rest are kept for what else the edge
// opens (listeners, HTTP requests, health checks, ACME, logs), a tenth of
// the limit or 256, whichever is more, so that past the limit clients get
// 503 instead of the edge failing to accept (EMFILE) on every listener.
func defaultConnections(files uint64) int {
	if files == 0 {
		return 0
	}
	keep := max(files/10, 256)
	if files <= 2*keep {
		return int(max(files/2, 1))
	}
	return int(min(files-keep, maxDefaultConnections))
}
