package main

// The operation log: one JSON object per line, appended (and, unless --fsync=false, synced to
// disk) before the call returns, for tests to read afterwards (docs/e2e.md, "The loopfs test driver"). Every call that
// changes something writes a "start" line when it begins and an "end" line with its result when
// it returns, under one operation ID, so a driver killed mid-call leaves a start with no end.
//
// An end line whose result is "grown" is one growth applied: ControllerExpandVolume grows the
// backing file (layer "file"), NodeExpandVolume or NodeStageVolume the filesystem (layer
// "filesystem"), NodeExpandVolume a block volume's device (layer "device"); sizeBefore and
// sizeAfter are that layer's bytes. A call that finds the size already reached ends
// "unchanged"; a refusal or failure ends "error" with its gRPC code.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc/status"
)

type opLog struct {
	mu   sync.Mutex
	file *os.File
	pid  int
	host string
	// noSync: each line is written (one write, O_APPEND) but not fsynced (--fsync=false).
	noSync bool
}

type opRecord struct {
	Time       string `json:"time"`
	Op         string `json:"op"`
	Phase      string `json:"phase"`
	OpID       string `json:"opId"`
	Pid        int    `json:"pid"`
	Host       string `json:"host,omitempty"` // which driver process: in a pod, the pod's name (each container's pid may be 1)
	Volume     string `json:"volume"`
	Required   int64  `json:"requiredBytes,omitempty"`
	Layer      string `json:"layer,omitempty"`
	SizeBefore *int64 `json:"sizeBefore,omitempty"`
	SizeAfter  *int64 `json:"sizeAfter,omitempty"`
	Online     *bool  `json:"online,omitempty"`
	Result     string `json:"result,omitempty"`
	Code       string `json:"code,omitempty"`
	Error      string `json:"error,omitempty"`
}

const (
	resultGrown     = "grown"
	resultUnchanged = "unchanged"
	resultOK        = "ok"
	resultError     = "error"
)

func openOpLog(path string) (*opLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return &opLog{file: f, pid: os.Getpid(), host: host}, nil
}

func (l *opLog) write(rec opRecord) {
	rec.Time = time.Now().UTC().Format(time.RFC3339Nano)
	rec.Pid, rec.Host = l.pid, l.host
	line, err := json.Marshal(rec)
	if err != nil {
		panic(fmt.Sprintf("encoding an operation log record: %v", err)) // plain fields only: cannot happen
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// One write per line on an O_APPEND file: lines never interleave.
	if _, err := l.file.Write(append(line, '\n')); err != nil {
		panic(fmt.Sprintf("writing the operation log: %v", err)) // the tests would read a lie
	}
	if l.noSync {
		return
	}
	if err := l.file.Sync(); err != nil {
		panic(fmt.Sprintf("syncing the operation log: %v", err))
	}
}

// operation is one call being logged; its end fields are filled in as the call goes.
type operation struct {
	log *opLog
	rec opRecord
}

func (l *opLog) begin(op, volume string, required int64) *operation {
	o := &operation{log: l, rec: opRecord{Op: op, Volume: volume, Required: required, OpID: randomSuffix() + randomSuffix()}}
	start := o.rec
	start.Phase = "start"
	l.write(start)
	return o
}

// sizes records a growth's layer and sizes; the result follows from them.
func (o *operation) sizes(layer string, before, after int64) {
	o.rec.Layer, o.rec.SizeBefore, o.rec.SizeAfter = layer, &before, &after
}

func (o *operation) online(v bool) { o.rec.Online = &v }

// end writes the end line for the call's outcome and passes err through.
func (o *operation) end(err error) error {
	o.rec.Phase = "end"
	switch {
	case err != nil:
		o.rec.Result = resultError
		o.rec.Code = status.Code(err).String()
		o.rec.Error = err.Error()
	case o.rec.SizeBefore != nil && *o.rec.SizeAfter > *o.rec.SizeBefore:
		o.rec.Result = resultGrown
	case o.rec.SizeBefore != nil:
		o.rec.Result = resultUnchanged
	default:
		o.rec.Result = resultOK
	}
	o.log.write(o.rec)
	return err
}
