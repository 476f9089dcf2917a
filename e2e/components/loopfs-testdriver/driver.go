package main

// The driver's shared state and its identity service. The state is configuration only: every
// fact about a volume is on disk or in the kernel (store.go, loopdev.go, mounts.go), and the only
// thing held in memory is a lock per volume, so that calls on one volume run one at a time. That
// lock is also a file lock under <root>/locks, because several driver processes may share one
// root: the node plugin and the controller replicas of a Deployment on the same node.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type config struct {
	name           string
	version        string
	nodeID         string
	root           string // volumes, scratch mounts (and the operation log by default)
	targetRoot     string // the only tree staging and publish paths may be in (kubelet's root)
	opLogPath      string
	defaultFsType  string
	maxVolumeBytes int64
	maxVolumes     int
	// How long ControllerExpandVolume works before it grows the file, as a storage back-end's
	// call would take: a window in which tests can interrupt it.
	controllerExpandDelay time.Duration
	// Whether growths and operation log lines are fsynced (--fsync); creation always is.
	fsync bool
}

type driver struct {
	config
	store   *store
	log     *opLog
	scratch string
	lockDir string

	locksMu sync.Mutex
	locks   map[string]*sync.Mutex
}

func newDriver(c config) (*driver, error) {
	if c.name == "" || c.nodeID == "" {
		return nil, fmt.Errorf("the driver name and the node ID are required")
	}
	if !supportedFsType(c.defaultFsType) {
		return nil, fmt.Errorf("default filesystem type %q: only ext4 and xfs are supported", c.defaultFsType)
	}
	if c.maxVolumeBytes < minXFSBytes || c.maxVolumes < 1 {
		return nil, fmt.Errorf("the per-volume cap (%d bytes) must be at least %d bytes and the volume cap (%d) at least 1", c.maxVolumeBytes, minXFSBytes, c.maxVolumes)
	}
	for _, dir := range []string{c.root, c.targetRoot} {
		if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || dir == "/" {
			return nil, fmt.Errorf("%q is not an absolute, clean path below /", dir)
		}
	}
	if info, err := os.Stat(c.targetRoot); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("the target root %s is not a directory (%v)", c.targetRoot, err)
	}
	s, err := openStore(c.root)
	if err != nil {
		return nil, err
	}
	s.noSync = !c.fsync
	if _, err := s.removeLeftovers(); err != nil {
		return nil, fmt.Errorf("removing what an interrupted call left in %s: %w", s.dir, err)
	}
	scratch, err := scratchDir(c.root)
	if err != nil {
		return nil, err
	}
	lockDir := filepath.Join(c.root, "locks")
	if err := os.MkdirAll(lockDir, 0o700); err != nil {
		return nil, err
	}
	log, err := openOpLog(c.opLogPath)
	if err != nil {
		return nil, err
	}
	log.noSync = !c.fsync
	return &driver{config: c, store: s, log: log, scratch: scratch, lockDir: lockDir, locks: map[string]*sync.Mutex{}}, nil
}

// lock serialises calls on one volume, within this process (a mutex) and across every driver
// process sharing the root (an exclusive flock on <root>/locks/<id>, which the kernel drops when
// a process dies, so a killed driver never leaves a volume locked). The lock files stay: removing
// one while another process waits on it would let two holders in. The returned function unlocks.
func (d *driver) lock(id string) (func(), error) {
	if err := validVolumeID(id); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	d.locksMu.Lock()
	m, ok := d.locks[id]
	if !ok {
		m = &sync.Mutex{}
		d.locks[id] = m
	}
	d.locksMu.Unlock()
	m.Lock()
	f, err := os.OpenFile(filepath.Join(d.lockDir, id), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		m.Unlock()
		return nil, status.Errorf(codes.Internal, "volume %s: opening its lock file: %v", id, err)
	}
	if err := flockRetry(f, unix.LOCK_EX); err != nil {
		f.Close()
		m.Unlock()
		return nil, status.Errorf(codes.Internal, "volume %s: locking: %v", id, err)
	}
	return func() {
		_ = flockRetry(f, unix.LOCK_UN)
		f.Close()
		m.Unlock()
	}, nil
}

func flockRetry(f *os.File, how int) error {
	for {
		if err := unix.Flock(int(f.Fd()), how); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// volume reads a volume's record, as a gRPC error when it cannot.
func (d *driver) volume(id string) (*volumeRecord, error) {
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is empty")
	}
	rec, err := d.store.get(id)
	switch {
	case err == errNoVolume:
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist", id)
	case err != nil:
		return nil, status.Errorf(codes.InvalidArgument, "volume %s: %v", id, err)
	}
	return rec, nil
}

// identityServer answers the identity service.
type identityServer struct {
	csi.UnimplementedIdentityServer
	d *driver
}

func (s *identityServer) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: s.d.name, VendorVersion: s.d.version}, nil
}

func (s *identityServer) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{
		{Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: csi.PluginCapability_Service_CONTROLLER_SERVICE}}},
		{Type: &csi.PluginCapability_VolumeExpansion_{VolumeExpansion: &csi.PluginCapability_VolumeExpansion{Type: csi.PluginCapability_VolumeExpansion_ONLINE}}},
	}}, nil
}

func (s *identityServer) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

// capabilityKind checks one volume capability and returns its mode and filesystem type
// ("" when the capability names none).
func capabilityKind(c *csi.VolumeCapability) (mode, fsType string, err error) {
	if c == nil {
		return "", "", status.Error(codes.InvalidArgument, "volume capability is missing")
	}
	switch c.GetAccessMode().GetMode() {
	case csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
		csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER, csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER:
	default:
		return "", "", status.Errorf(codes.InvalidArgument, "access mode %v: this driver's volumes live on one node (single-node modes only)", c.GetAccessMode().GetMode())
	}
	switch {
	case c.GetBlock() != nil:
		return modeBlock, "", nil
	case c.GetMount() != nil:
		fsType = c.GetMount().GetFsType()
		if fsType != "" && !supportedFsType(fsType) {
			return "", "", status.Errorf(codes.InvalidArgument, "filesystem type %q: only ext4 and xfs are supported", fsType)
		}
		return modeFilesystem, fsType, nil
	}
	return "", "", status.Error(codes.InvalidArgument, "volume capability is neither block nor mount")
}

// matchCapability checks a node call's capability against the volume it names.
func matchCapability(rec *volumeRecord, c *csi.VolumeCapability) error {
	mode, fsType, err := capabilityKind(c)
	if err != nil {
		return err
	}
	if mode != rec.Mode {
		return status.Errorf(codes.InvalidArgument, "volume %s is a %s volume; the call asks for %s", rec.ID, rec.Mode, mode)
	}
	if fsType != "" && fsType != rec.FsType {
		return status.Errorf(codes.InvalidArgument, "volume %s holds %s; the call asks for %s", rec.ID, rec.FsType, fsType)
	}
	return nil
}
