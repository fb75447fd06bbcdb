//go:build !js

package client

import "log/slog"

// Logger is what the client logs through: log/slog's Logger natively (an
// alias, so any *slog.Logger fits Options.Logger), a small console logger
// in the browser build, where log/slog would add about 175 KB gzipped to
// sluice.wasm.
type Logger = slog.Logger

// defaultLogger is the Logger of Options left nil.
func defaultLogger() *Logger { return slog.Default() }
