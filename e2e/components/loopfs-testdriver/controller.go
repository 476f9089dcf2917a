package main

// The controller service: volumes made, removed and grown as sparse files. Growing the file is
// the whole controller expansion (truncate writes nothing); the filesystem on it is grown by the
// node service, so every expansion reports that node expansion is required.

import (
	"context"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type controllerServer struct {
	csi.UnimplementedControllerServer
	d *driver
}

func (s *controllerServer) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	rpc := func(t csi.ControllerServiceCapability_RPC_Type) *csi.ControllerServiceCapability {
		return &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}}
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{
		rpc(csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME),
		rpc(csi.ControllerServiceCapability_RPC_EXPAND_VOLUME),
	}}, nil
}

// requestKind checks a request's capabilities: all must agree on mode and filesystem type.
func (s *controllerServer) requestKind(caps []*csi.VolumeCapability) (mode, fsType string, err error) {
	if len(caps) == 0 {
		return "", "", status.Error(codes.InvalidArgument, "volume capabilities are missing")
	}
	for i, c := range caps {
		m, f, err := capabilityKind(c)
		if err != nil {
			return "", "", err
		}
		if i > 0 && (m != mode || f != fsType) {
			return "", "", status.Errorf(codes.InvalidArgument, "the capabilities disagree: %s %q and %s %q", mode, fsType, m, f)
		}
		mode, fsType = m, f
	}
	if mode == modeFilesystem && fsType == "" {
		fsType = s.d.defaultFsType
	}
	return mode, fsType, nil
}

func (s *controllerServer) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	id := req.GetName()
	if err := validVolumeID(id); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "volume name: %v", err)
	}
	mode, fsType, err := s.requestKind(req.GetVolumeCapabilities())
	if err != nil {
		return nil, err
	}
	if req.GetVolumeContentSource() != nil {
		return nil, status.Error(codes.InvalidArgument, "volume content sources (snapshots, clones) are not supported")
	}
	required, limit := req.GetCapacityRange().GetRequiredBytes(), req.GetCapacityRange().GetLimitBytes()
	size, reason := volumeBytes(required, limit, sizeUnit(mode, fsType), minBytes(mode, fsType), s.d.maxVolumeBytes)
	if reason != "" {
		return nil, status.Errorf(codes.OutOfRange, "volume %s: %s", id, reason)
	}
	unlock, err := s.d.lock(id)
	if err != nil {
		return nil, err
	}
	defer unlock()

	response := func(bytes int64) *csi.CreateVolumeResponse {
		ctx := map[string]string{"mode": mode}
		if fsType != "" {
			ctx["fsType"] = fsType
		}
		return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: id, CapacityBytes: bytes, VolumeContext: ctx}}
	}
	if existing, err := s.d.store.get(id); err == nil {
		have, err := s.d.store.size(id)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "volume %s: %v", id, err)
		}
		if existing.Mode != mode || (mode == modeFilesystem && existing.FsType != fsType) || have < required || (limit > 0 && have > limit) {
			return nil, status.Errorf(codes.AlreadyExists, "volume %s exists as %s %s of %d bytes, which does not match this request", id, existing.Mode, existing.FsType, have)
		}
		return response(have), nil
	} else if err != errNoVolume {
		return nil, status.Errorf(codes.Internal, "volume %s: %v", id, err)
	}

	op := s.d.log.begin("CreateVolume", id, required)
	if n, err := s.d.store.count(); err != nil {
		return nil, op.end(status.Errorf(codes.Internal, "counting volumes: %v", err))
	} else if n >= s.d.maxVolumes {
		return nil, op.end(status.Errorf(codes.ResourceExhausted, "this driver already holds %d volumes, its cap (--max-volumes)", n))
	}
	var format func(string) error
	if mode == modeFilesystem {
		format = func(file string) error { return makeFilesystem(file, fsType) }
	}
	if err := s.d.store.create(volumeRecord{ID: id, Name: req.GetName(), Mode: mode, FsType: fsType, Created: time.Now().UTC()}, size, format); err != nil {
		return nil, op.end(status.Errorf(codes.Internal, "creating volume %s: %v", id, err))
	}
	op.rec.Layer, op.rec.SizeAfter = "file", &size // a size, not a growth: the result stays "ok"
	return response(size), op.end(nil)
}

func (s *controllerServer) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is empty")
	}
	if validVolumeID(id) != nil {
		return &csi.DeleteVolumeResponse{}, nil // no such volume can exist
	}
	unlock, err := s.d.lock(id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := s.d.store.get(id); err == errNoVolume {
		return &csi.DeleteVolumeResponse{}, nil
	}
	op := s.d.log.begin("DeleteVolume", id, 0)
	dev, err := attachedLoop(s.d.store.backingFile(id))
	if err != nil {
		return nil, op.end(status.Errorf(codes.Internal, "volume %s: %v", id, err))
	}
	if dev != "" {
		return nil, op.end(status.Errorf(codes.FailedPrecondition, "volume %s is still attached as %s (not unstaged)", id, dev))
	}
	if err := s.d.store.remove(id); err != nil {
		return nil, op.end(status.Errorf(codes.Internal, "deleting volume %s: %v", id, err))
	}
	return &csi.DeleteVolumeResponse{}, op.end(nil)
}

func (s *controllerServer) ControllerExpandVolume(_ context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	id := req.GetVolumeId()
	rec, err := s.d.volume(id)
	if err != nil {
		return nil, err
	}
	if req.GetCapacityRange() == nil {
		return nil, status.Error(codes.InvalidArgument, "capacity range is missing")
	}
	required, limit := req.GetCapacityRange().GetRequiredBytes(), req.GetCapacityRange().GetLimitBytes()
	unlock, err := s.d.lock(id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	op := s.d.log.begin("ControllerExpandVolume", id, required)
	time.Sleep(s.d.controllerExpandDelay)
	have, err := s.d.store.size(id)
	if err != nil {
		return nil, op.end(status.Errorf(codes.Internal, "volume %s: %v", id, err))
	}
	size := have
	if have < required {
		var reason string
		size, reason = volumeBytes(required, limit, sizeUnit(rec.Mode, rec.FsType), minBytes(rec.Mode, rec.FsType), s.d.maxVolumeBytes)
		if reason != "" {
			return nil, op.end(status.Errorf(codes.OutOfRange, "volume %s: %s", id, reason))
		}
		if err := s.d.store.grow(id, size); err != nil {
			return nil, op.end(status.Errorf(codes.Internal, "growing volume %s: %v", id, err))
		}
	}
	op.sizes("file", have, size)
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: size, NodeExpansionRequired: true}, op.end(nil)
}

func (s *controllerServer) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	rec, err := s.d.volume(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume capabilities are missing")
	}
	for _, c := range req.GetVolumeCapabilities() {
		if err := matchCapability(rec, c); err != nil {
			return &csi.ValidateVolumeCapabilitiesResponse{Message: status.Convert(err).Message()}, nil
		}
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext: req.GetVolumeContext(), VolumeCapabilities: req.GetVolumeCapabilities(), Parameters: req.GetParameters(),
	}}, nil
}
