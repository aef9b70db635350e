package certs

import (
	"github.com/rs/zerolog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapLogger gives certmagic (which logs with zap) a logger that writes into log, so that its
// lines go where ours go, at the same levels, and nowhere when log is disabled (the zero
// Logger). Panic and fatal entries are written as errors: a library never ends our process.
func zapLogger(log zerolog.Logger) *zap.Logger {
	e := log.Error()
	if e == nil {
		return zap.NewNop()
	}
	e.Discard()
	return zap.New(&zapCore{log: log})
}

// zapCore is a zapcore.Core over a zerolog.Logger.
type zapCore struct {
	log    zerolog.Logger
	fields []zapcore.Field
}

func zerologLevel(l zapcore.Level) zerolog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return zerolog.DebugLevel
	case l == zapcore.InfoLevel:
		return zerolog.InfoLevel
	case l == zapcore.WarnLevel:
		return zerolog.WarnLevel
	}
	return zerolog.ErrorLevel
}

func (c *zapCore) Enabled(l zapcore.Level) bool {
	e := c.log.WithLevel(zerologLevel(l))
	if e == nil {
		return false
	}
	e.Discard()
	return true
}

func (c *zapCore) With(fields []zapcore.Field) zapcore.Core {
	return &zapCore{log: c.log, fields: append(c.fields[:len(c.fields):len(c.fields)], fields...)}
}

func (c *zapCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c *zapCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	e := c.log.WithLevel(zerologLevel(ent.Level))
	if e == nil {
		return nil
	}
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fields {
		f.AddTo(enc)
	}
	if ent.LoggerName != "" {
		e = e.Str("logger", ent.LoggerName)
	}
	e.Fields(enc.Fields).Msg(ent.Message)
	return nil
}

func (c *zapCore) Sync() error { return nil }
