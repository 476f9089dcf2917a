package main

// The node service. Staging attaches the backing file to a loop device and mounts its
// filesystem at the staging path; publishing bind-mounts that onto the pod's target path (a
// block volume: the device node onto a file); unpublishing and unstaging undo it, unstaging down
// to detaching the device. Every call first looks at what is attached and mounted now and does
// only what is missing, so a call repeated after a kubelet, driver or node restart (when the
// mounts and devices may or may not still be there) ends in the same state.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
)

type nodeServer struct {
	csi.UnimplementedNodeServer
	d *driver
}

func (s *nodeServer) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: s.d.nodeID}, nil
}

func (s *nodeServer) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	rpc := func(t csi.NodeServiceCapability_RPC_Type) *csi.NodeServiceCapability {
		return &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: t}}}
	}
	return &csi.NodeGetCapabilitiesResponse{Capabilities: []*csi.NodeServiceCapability{
		rpc(csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME),
		rpc(csi.NodeServiceCapability_RPC_EXPAND_VOLUME),
		rpc(csi.NodeServiceCapability_RPC_GET_VOLUME_STATS),
	}}, nil
}

// path checks a kubelet path the call names: inside the target root, no way out.
func (s *nodeServer) path(p, what string) error {
	if err := confine(s.d.targetRoot, p, what); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return nil
}

// internal makes err a gRPC error: Internal unless it is one already.
func internal(id string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok && status.Code(err) != codes.Unknown {
		return err
	}
	return status.Errorf(codes.Internal, "volume %s: %v", id, err)
}

func (s *nodeServer) NodeStageVolume(_ context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	id, staging := req.GetVolumeId(), req.GetStagingTargetPath()
	rec, err := s.d.volume(id)
	if err != nil {
		return nil, err
	}
	if err := s.path(staging, "staging target path"); err != nil {
		return nil, err
	}
	if err := matchCapability(rec, req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	unlock, err := s.d.lock(id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	op := s.d.log.begin("NodeStageVolume", id, 0)
	return &csi.NodeStageVolumeResponse{}, op.end(s.stage(rec, staging, req.GetVolumeCapability().GetMount().GetMountFlags(), op))
}

func (s *nodeServer) stage(rec *volumeRecord, staging string, mountFlags []string, op *operation) error {
	dev, attachedNow, err := ensureLoop(s.d.store.backingFile(rec.ID))
	if err != nil {
		return internal(rec.ID, err)
	}
	undo := func(err error) error {
		if attachedNow {
			_ = detachLoop(dev)
		}
		return internal(rec.ID, err)
	}
	// A device attached before ControllerExpandVolume grew the file still has the old size.
	if err := refreshLoop(dev); err != nil {
		return undo(err)
	}
	if rec.Mode == modeBlock {
		return nil
	}
	current, err := mountAt(staging)
	if err != nil {
		return undo(err)
	}
	if ours, err := isMountOf(current, dev); err != nil {
		return undo(err)
	} else if ours {
		return nil // staged already
	} else if current != nil {
		return undo(status.Errorf(codes.FailedPrecondition, "%s is already a mount point of %s (%s), not of volume %s", staging, current.Source, current.FsType, rec.ID))
	}
	mounts, err := mountsOfDevice(dev)
	if err != nil {
		return undo(err)
	}
	// ext4 grows here, unmounted, whenever its device is larger: the one moment it can grow
	// where the driver lacks CAP_SYS_RESOURCE (filesystem.go).
	if rec.FsType == fsExt4 && len(mounts) == 0 {
		if err := s.growUnmounted(dev, rec, op); err != nil {
			return undo(err)
		}
	}
	if err := os.MkdirAll(staging, 0o750); err != nil {
		return undo(err)
	}
	if err := mountFilesystem(dev, staging, rec.FsType, mountFlags); err != nil {
		return undo(err)
	}
	return nil
}

func (s *nodeServer) growUnmounted(dev string, rec *volumeRecord, op *operation) error {
	if err := undoInterruptedResize(dev, ext4UndoFile(s.d.scratch, rec.ID)); err != nil {
		return err
	}
	before, err := filesystemBytes(dev, rec.FsType, "")
	if err != nil {
		return err
	}
	devBytes, err := loopSize(dev)
	if err != nil {
		return err
	}
	if before >= devBytes {
		return nil
	}
	if err := growFilesystem(dev, rec.FsType, "", s.d.scratch, rec.ID); err != nil {
		return err
	}
	after, err := filesystemBytes(dev, rec.FsType, "")
	if err != nil {
		return err
	}
	op.online(false)
	op.sizes("filesystem", before, after)
	return nil
}

func (s *nodeServer) NodeUnstageVolume(_ context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	id, staging := req.GetVolumeId(), req.GetStagingTargetPath()
	if _, err := s.d.volume(id); err != nil {
		return nil, err
	}
	if err := s.path(staging, "staging target path"); err != nil {
		return nil, err
	}
	unlock, err := s.d.lock(id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	op := s.d.log.begin("NodeUnstageVolume", id, 0)
	return &csi.NodeUnstageVolumeResponse{}, op.end(s.unstage(id, staging))
}

func (s *nodeServer) unstage(id, staging string) error {
	if err := unmountAll(staging); err != nil {
		return internal(id, err)
	}
	file := s.d.store.backingFile(id)
	devices, err := loopDevicesOf(file)
	if err != nil {
		return internal(id, err)
	}
	for _, dev := range devices {
		mounts, err := mountsOfDevice(dev)
		if err != nil {
			return internal(id, err)
		}
		if len(mounts) > 0 {
			var where []string
			for _, m := range mounts {
				where = append(where, m.MountPoint)
			}
			return status.Errorf(codes.FailedPrecondition, "volume %s (%s) is still mounted at %s", id, dev, strings.Join(where, ", "))
		}
		if err := detachLoop(dev); err != nil {
			return internal(id, err)
		}
	}
	// A device still open elsewhere (a block volume's publish bind mount) is only marked to
	// detach when it is closed: the call fails until it is really gone, and kubelet retries.
	if left, err := loopDevicesOf(file); err != nil {
		return internal(id, err)
	} else if len(left) > 0 {
		return status.Errorf(codes.FailedPrecondition, "volume %s: %s is still in use and has not detached", id, strings.Join(left, ", "))
	}
	return nil
}

func (s *nodeServer) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	id, staging, target := req.GetVolumeId(), req.GetStagingTargetPath(), req.GetTargetPath()
	rec, err := s.d.volume(id)
	if err != nil {
		return nil, err
	}
	if err := s.path(staging, "staging target path"); err != nil {
		return nil, err
	}
	if err := s.path(target, "target path"); err != nil {
		return nil, err
	}
	if err := matchCapability(rec, req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	readOnly := req.GetReadonly() || req.GetVolumeCapability().GetAccessMode().GetMode() == csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY
	unlock, err := s.d.lock(id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	op := s.d.log.begin("NodePublishVolume", id, 0)
	return &csi.NodePublishVolumeResponse{}, op.end(s.publish(rec, staging, target, readOnly))
}

func (s *nodeServer) publish(rec *volumeRecord, staging, target string, readOnly bool) error {
	dev, err := attachedLoop(s.d.store.backingFile(rec.ID))
	if err != nil {
		return internal(rec.ID, err)
	}
	if dev == "" {
		return status.Errorf(codes.FailedPrecondition, "volume %s is not staged (no loop device)", rec.ID)
	}
	current, err := mountAt(target)
	if err != nil {
		return internal(rec.ID, err)
	}
	if rec.Mode == modeBlock {
		if current != nil {
			if current.Root == "/"+filepath.Base(dev) {
				return nil // published already
			}
			return status.Errorf(codes.FailedPrecondition, "%s is already a mount point of %s, not of %s", target, current.Source, dev)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
			return internal(rec.ID, err)
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o600)
		if err != nil {
			return internal(rec.ID, err)
		}
		f.Close()
		return internal(rec.ID, bindMount(dev, target, readOnly))
	}
	if staged, err := mountAt(staging); err != nil {
		return internal(rec.ID, err)
	} else if ours, err := isMountOf(staged, dev); err != nil {
		return internal(rec.ID, err)
	} else if !ours {
		return status.Errorf(codes.FailedPrecondition, "volume %s is not staged at %s", rec.ID, staging)
	}
	if ours, err := isMountOf(current, dev); err != nil {
		return internal(rec.ID, err)
	} else if ours {
		return nil // published already
	} else if current != nil {
		return status.Errorf(codes.FailedPrecondition, "%s is already a mount point of %s, not of volume %s", target, current.Source, rec.ID)
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return internal(rec.ID, err)
	}
	if err := bindMount(staging, target, readOnly); err != nil {
		return internal(rec.ID, err)
	}
	return nil
}

func (s *nodeServer) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	id, target := req.GetVolumeId(), req.GetTargetPath()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is empty")
	}
	if err := s.path(target, "target path"); err != nil {
		return nil, err
	}
	// No lookup of the volume: whatever is mounted at the target goes, even if the volume has
	// been deleted since, so a repeated call always ends with the target gone.
	if validVolumeID(id) == nil {
		unlock, err := s.d.lock(id)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	op := s.d.log.begin("NodeUnpublishVolume", id, 0)
	err := unmountAll(target)
	if err == nil {
		if rmErr := os.Remove(target); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			err = rmErr
		}
	}
	if err != nil {
		return nil, op.end(internal(id, err))
	}
	return &csi.NodeUnpublishVolumeResponse{}, op.end(nil)
}

func (s *nodeServer) NodeGetVolumeStats(_ context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	id, path := req.GetVolumeId(), req.GetVolumePath()
	rec, err := s.d.volume(id)
	if err != nil {
		return nil, err
	}
	if err := s.path(path, "volume path"); err != nil {
		return nil, err
	}
	dev, err := attachedLoop(s.d.store.backingFile(id))
	if err != nil {
		return nil, internal(id, err)
	}
	if dev == "" {
		return nil, status.Errorf(codes.NotFound, "volume %s is not staged on this node", id)
	}
	if rec.Mode == modeBlock {
		size, err := loopSize(dev)
		if err != nil {
			return nil, internal(id, err)
		}
		return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{{Unit: csi.VolumeUsage_BYTES, Total: size}}}, nil
	}
	m, err := mountAt(path)
	if err != nil {
		return nil, internal(id, err)
	}
	if ours, err := isMountOf(m, dev); err != nil {
		return nil, internal(id, err)
	} else if !ours {
		return nil, status.Errorf(codes.NotFound, "volume %s is not mounted at %s", id, path)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return nil, internal(id, fmt.Errorf("statfs %s: %w", path, err))
	}
	bs := st.Bsize
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
		{Unit: csi.VolumeUsage_BYTES, Total: int64(st.Blocks) * bs, Available: int64(st.Bavail) * bs, Used: int64(st.Blocks-st.Bfree) * bs},
		{Unit: csi.VolumeUsage_INODES, Total: int64(st.Files), Available: int64(st.Ffree), Used: int64(st.Files - st.Ffree)},
	}}, nil
}

func (s *nodeServer) NodeExpandVolume(_ context.Context, req *csi.NodeExpandVolumeRequest) (*csi.NodeExpandVolumeResponse, error) {
	id, volumePath, staging := req.GetVolumeId(), req.GetVolumePath(), req.GetStagingTargetPath()
	rec, err := s.d.volume(id)
	if err != nil {
		return nil, err
	}
	if err := s.path(volumePath, "volume path"); err != nil {
		return nil, err
	}
	if staging != "" {
		if err := s.path(staging, "staging target path"); err != nil {
			return nil, err
		}
	}
	if c := req.GetVolumeCapability(); c != nil {
		if err := matchCapability(rec, c); err != nil {
			return nil, err
		}
	}
	required := req.GetCapacityRange().GetRequiredBytes()
	unlock, err := s.d.lock(id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	op := s.d.log.begin("NodeExpandVolume", id, required)
	size, err := s.expand(rec, required, volumePath, staging, op)
	if err != nil {
		return nil, op.end(err)
	}
	return &csi.NodeExpandVolumeResponse{CapacityBytes: size}, op.end(nil)
}

// expand grows the device to the backing file's size and the filesystem to the device's:
// online where it is mounted, otherwise unmounted (attaching the file for the call if needed).
func (s *nodeServer) expand(rec *volumeRecord, required int64, volumePath, staging string, op *operation) (int64, error) {
	file := s.d.store.backingFile(rec.ID)
	fileBytes, err := s.d.store.size(rec.ID)
	if err != nil {
		return 0, internal(rec.ID, err)
	}
	if required > fileBytes {
		return 0, status.Errorf(codes.FailedPrecondition, "volume %s is %d bytes, less than the %d asked for: ControllerExpandVolume has not grown it", rec.ID, fileBytes, required)
	}
	dev, err := attachedLoop(file)
	if err != nil {
		return 0, internal(rec.ID, err)
	}
	if dev == "" {
		if rec.Mode == modeBlock {
			return 0, status.Errorf(codes.FailedPrecondition, "block volume %s is not staged: its device takes the new size when it is", rec.ID)
		}
		dev, _, err = ensureLoop(file)
		if err != nil {
			return 0, internal(rec.ID, err)
		}
		defer func() {
			if err := detachLoop(dev); err != nil {
				klog.ErrorS(err, "detaching the loop device attached for an unmounted expansion", "volume", rec.ID, "device", dev)
			}
		}()
	}
	devBefore, err := loopSize(dev)
	if err != nil {
		return 0, internal(rec.ID, err)
	}
	if err := refreshLoop(dev); err != nil {
		return 0, internal(rec.ID, err)
	}
	devBytes, err := loopSize(dev)
	if err != nil {
		return 0, internal(rec.ID, err)
	}
	if rec.Mode == modeBlock {
		op.sizes("device", devBefore, devBytes)
		return devBytes, nil
	}

	mountPoint, err := mountPointOf(dev, volumePath, staging)
	if err != nil {
		return 0, internal(rec.ID, err)
	}
	op.online(mountPoint != "")
	before, err := filesystemBytes(dev, rec.FsType, mountPoint)
	if err != nil {
		return 0, internal(rec.ID, err)
	}
	after := before
	if before < devBytes {
		if err := growFilesystem(dev, rec.FsType, mountPoint, s.d.scratch, rec.ID); errors.Is(err, errOnlineExt4) {
			return 0, status.Errorf(codes.FailedPrecondition, "volume %s: %v", rec.ID, err)
		} else if err != nil {
			return 0, internal(rec.ID, err)
		}
		if after, err = filesystemBytes(dev, rec.FsType, mountPoint); err != nil {
			return 0, internal(rec.ID, err)
		}
	}
	op.sizes("filesystem", before, after)
	return fileBytes, nil
}

// mountPointOf is where the device's filesystem is mounted, preferring the paths the call names;
// "" when it is not mounted in this mount namespace.
func mountPointOf(dev string, paths ...string) (string, error) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		m, err := mountAt(p)
		if err != nil {
			return "", err
		}
		if ours, err := isMountOf(m, dev); err != nil || ours {
			return p, err
		}
	}
	mounts, err := mountsOfDevice(dev)
	if err != nil || len(mounts) == 0 {
		return "", err
	}
	return mounts[0].MountPoint, nil
}
