package tls

import (
	"context"
	"log/slog"
	"slices"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// slogCore is a zapcore.Core writing to an slog.Handler, so that the ACME
// library's zap logs land in the edge's structured log with its level and
// format.
type slogCore struct {
	h slog.Handler
}

// zapLogger returns a zap logger writing to log.
func zapLogger(log *slog.Logger) *zap.Logger {
	return zap.New(&slogCore{h: log.Handler()})
}

// slogLevel maps zap's levels onto slog's; DPanic and above are errors.
func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// Enabled implements zapcore.LevelEnabler.
func (c *slogCore) Enabled(l zapcore.Level) bool {
	return c.h.Enabled(context.Background(), slogLevel(l))
}

// With returns a core adding fields to every entry.
func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	return &slogCore{h: c.h.WithAttrs(attrs(fields))}
}

// Check adds the core to ce when the entry's level is enabled.
func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

// Write hands the entry to the slog handler.
func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	r := slog.NewRecord(e.Time, slogLevel(e.Level), e.Message, 0)
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	r.AddAttrs(attrs(fields)...)
	return c.h.Handle(context.Background(), r)
}

// Sync implements zapcore.Core; slog handlers do not buffer.
func (c *slogCore) Sync() error { return nil }

// attrs converts zap fields to slog attributes, in key order.
func attrs(fields []zapcore.Field) []slog.Attr {
	if len(fields) == 0 {
		return nil
	}
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	keys := make([]string, 0, len(enc.Fields))
	for k := range enc.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]slog.Attr, 0, len(keys))
	for _, k := range keys {
		out = append(out, slog.Any(k, enc.Fields[k]))
	}
	return out
}
