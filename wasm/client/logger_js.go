//go:build js

package client

import (
	"strings"
	"syscall/js"

	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// LogLevel orders log lines; the values are log/slog's, so levels read the
// same in both builds.
type LogLevel int

// Levels of the browser build's Logger.
const (
	LogDebug LogLevel = -4
	LogInfo  LogLevel = 0
	LogWarn  LogLevel = 4
	LogError LogLevel = 8
	// LogOff discards every line.
	LogOff LogLevel = 1 << 10
)

// Logger is the browser build's logger: the subset of log/slog's Logger
// the client uses (log/slog, which links encoding/json, would add about
// 175 KB gzipped to sluice.wasm). Lines look like slog's text format,
// "msg key=value ...", and go to a sink: the browser console by default.
type Logger struct {
	min  LogLevel
	sink func(level LogLevel, line string)
}

// NewLogger returns a Logger that passes lines at min and above to sink,
// or to the browser console (console.debug, info, warn or error) when sink
// is nil.
func NewLogger(min LogLevel, sink func(level LogLevel, line string)) *Logger {
	if sink == nil {
		sink = consoleSink
	}
	return &Logger{min: min, sink: sink}
}

// defaultLogger is the Logger of Options left nil.
func defaultLogger() *Logger { return NewLogger(LogInfo, nil) }

// Debug logs at LogDebug; args are alternating keys and values.
func (l *Logger) Debug(msg string, args ...any) { l.log(LogDebug, msg, args) }

// Info logs at LogInfo.
func (l *Logger) Info(msg string, args ...any) { l.log(LogInfo, msg, args) }

// Warn logs at LogWarn.
func (l *Logger) Warn(msg string, args ...any) { l.log(LogWarn, msg, args) }

// Error logs at LogError.
func (l *Logger) Error(msg string, args ...any) { l.log(LogError, msg, args) }

func (l *Logger) log(level LogLevel, msg string, args []any) {
	if l == nil || level < l.min {
		return
	}
	var b strings.Builder
	b.WriteString(msg)
	for i := 0; i < len(args); i += 2 {
		b.WriteByte(' ')
		if i+1 == len(args) {
			b.WriteString("!BADKEY=" + errtext.Text(args[i]))
			break
		}
		b.WriteString(errtext.Text(args[i]) + "=" + errtext.Text(args[i+1]))
	}
	l.sink(level, b.String())
}

// consoleSink writes a line with the console method of its level.
func consoleSink(level LogLevel, line string) {
	method := "debug"
	switch {
	case level >= LogError:
		method = "error"
	case level >= LogWarn:
		method = "warn"
	case level >= LogInfo:
		method = "info"
	}
	js.Global().Get("console").Call(method, line)
}
