package wire

// The readers PDUFields uses, for the table test of their own.
var (
	ReadAction = readAction
	ReadID     = readID
)
