package main

// The test harness: a driver serving on a unix socket in a scratch directory, with a client, a
// stand-in kubelet root, and a teardown that unmounts and detaches whatever a test left, then
// checks that nothing is left. The driver tests attach loop devices and mount filesystems, so
// they need root (as the node does).

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

type harness struct {
	t          *testing.T
	dir        string
	root       string // the driver's --root
	targetRoot string // stands in for kubelet's root
	driver     *driver
	server     *grpc.Server
	conn       *grpc.ClientConn
	identity   csi.IdentityClient
	controller csi.ControllerClient
	node       csi.NodeClient
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test attaches loop devices and mounts filesystems: run it as root")
	}
}

func newHarness(t *testing.T, tweak ...func(*config)) *harness {
	t.Helper()
	requireRoot(t)
	dir, err := os.MkdirTemp("/var/tmp", "loopfs-test-")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, dir: dir, root: filepath.Join(dir, "root"), targetRoot: filepath.Join(dir, "kubelet")}
	if err := os.MkdirAll(h.targetRoot, 0o750); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.teardown)
	h.start(tweak...)
	return h
}

func (h *harness) config() config {
	return config{
		name: "loopfs.test.csi-resizer.local", version: version, nodeID: "test-node",
		root: h.root, targetRoot: h.targetRoot, opLogPath: filepath.Join(h.root, "operations.jsonl"),
		defaultFsType: fsExt4, maxVolumeBytes: 4 * gib, maxVolumes: 8, fsync: true,
	}
}

// start runs a driver on the harness's root; restart() is stop() then start().
func (h *harness) start(tweak ...func(*config)) {
	h.t.Helper()
	c := h.config()
	for _, f := range tweak {
		f(&c)
	}
	d, err := newDriver(c)
	if err != nil {
		h.t.Fatal(err)
	}
	socket := filepath.Join(h.dir, "csi.sock")
	_ = os.Remove(socket)
	listener, err := net.Listen("unix", socket)
	if err != nil {
		h.t.Fatal(err)
	}
	h.driver, h.server = d, newServer(d)
	go func() { _ = h.server.Serve(listener) }()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		h.t.Fatal(err)
	}
	h.conn = conn
	h.identity, h.controller, h.node = csi.NewIdentityClient(conn), csi.NewControllerClient(conn), csi.NewNodeClient(conn)
}

func (h *harness) stop() {
	if h.conn != nil {
		h.conn.Close()
		h.conn = nil
	}
	if h.server != nil {
		h.server.Stop()
		h.server = nil
	}
	if h.driver != nil {
		h.driver.log.file.Close()
		h.driver = nil
	}
}

func (h *harness) restart() {
	h.t.Helper()
	h.stop()
	h.start()
}

// nodeRestart does to the volumes what a node's restart does: every mount and loop device is
// gone, behind the driver's back; only the files remain. The driver restarts too.
func (h *harness) nodeRestart() {
	h.t.Helper()
	h.stop()
	if err := unmountUnder(h.dir); err != nil {
		h.t.Fatal(err)
	}
	if err := detachUnder(h.root); err != nil {
		h.t.Fatal(err)
	}
	h.start()
}

func (h *harness) teardown() {
	h.stop()
	if err := unmountUnder(h.dir); err != nil {
		h.t.Errorf("teardown: %v", err)
	}
	if err := detachUnder(h.root); err != nil {
		h.t.Errorf("teardown: %v", err)
	}
	if err := os.RemoveAll(h.dir); err != nil {
		h.t.Errorf("teardown: %v", err)
	}
}

// mountPointsUnder lists the mount points at or below dir, deepest first.
func mountPointsUnder(dir string) ([]string, error) {
	infos, err := mountInfo()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range infos {
		if m.MountPoint == dir || strings.HasPrefix(m.MountPoint, dir+"/") {
			out = append(out, m.MountPoint)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}

func unmountUnder(dir string) error {
	for range 8 {
		mounts, err := mountPointsUnder(dir)
		if err != nil || len(mounts) == 0 {
			return err
		}
		for _, m := range mounts {
			_ = unix.Unmount(m, 0)
		}
	}
	return fmt.Errorf("still mounted under %s after 8 passes", dir)
}

func backingFilesUnder(root string) []string {
	files, _ := filepath.Glob(filepath.Join(root, "volumes", "*", "disk.img"))
	return files
}

func detachUnder(root string) error {
	for _, f := range backingFilesUnder(root) {
		devices, err := loopDevicesOf(f)
		if err != nil {
			return err
		}
		for _, dev := range devices {
			if err := detachLoop(dev); err != nil {
				return err
			}
		}
	}
	return nil
}

// loopsUnder lists the loop devices attached to the harness's volumes.
func (h *harness) loopsUnder() []string {
	var all []string
	for _, f := range backingFilesUnder(h.root) {
		devices, err := loopDevicesOf(f)
		if err != nil {
			h.t.Fatal(err)
		}
		all = append(all, devices...)
	}
	return all
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func mountCap(fsType string) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: fsType}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

func blockCap() *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

func (h *harness) create(name string, c *csi.VolumeCapability, bytes int64) *csi.Volume {
	h.t.Helper()
	res, err := h.controller.CreateVolume(ctx(h.t), &csi.CreateVolumeRequest{
		Name: name, VolumeCapabilities: []*csi.VolumeCapability{c}, CapacityRange: &csi.CapacityRange{RequiredBytes: bytes},
	})
	if err != nil {
		h.t.Fatalf("CreateVolume %s: %v", name, err)
	}
	return res.GetVolume()
}

// Paths as kubelet makes them (the staging path's parent exists, the target's parent too).
func (h *harness) stagingPath(id string) string {
	p := filepath.Join(h.targetRoot, "plugins", "kubernetes.io", "csi", "loopfs", id, "globalmount")
	if err := os.MkdirAll(p, 0o750); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) targetPath(id, pod string) string {
	p := filepath.Join(h.targetRoot, "pods", pod, "volumes", "kubernetes.io~csi", id, "mount")
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) stage(id string, c *csi.VolumeCapability) string {
	h.t.Helper()
	staging := h.stagingPath(id)
	if _, err := h.node.NodeStageVolume(ctx(h.t), &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: c}); err != nil {
		h.t.Fatalf("NodeStageVolume %s: %v", id, err)
	}
	return staging
}

func (h *harness) publish(id string, c *csi.VolumeCapability, pod string) string {
	h.t.Helper()
	target := h.targetPath(id, pod)
	if _, err := h.node.NodePublishVolume(ctx(h.t), &csi.NodePublishVolumeRequest{
		VolumeId: id, StagingTargetPath: h.stagingPath(id), TargetPath: target, VolumeCapability: c,
	}); err != nil {
		h.t.Fatalf("NodePublishVolume %s: %v", id, err)
	}
	return target
}

func (h *harness) unpublish(id, target string) {
	h.t.Helper()
	if _, err := h.node.NodeUnpublishVolume(ctx(h.t), &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
		h.t.Fatalf("NodeUnpublishVolume %s: %v", id, err)
	}
}

func (h *harness) unstage(id string) {
	h.t.Helper()
	if _, err := h.node.NodeUnstageVolume(ctx(h.t), &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: h.stagingPath(id)}); err != nil {
		h.t.Fatalf("NodeUnstageVolume %s: %v", id, err)
	}
}

func (h *harness) controllerExpand(id string, bytes int64) *csi.ControllerExpandVolumeResponse {
	h.t.Helper()
	res, err := h.controller.ControllerExpandVolume(ctx(h.t), &csi.ControllerExpandVolumeRequest{VolumeId: id, CapacityRange: &csi.CapacityRange{RequiredBytes: bytes}})
	if err != nil {
		h.t.Fatalf("ControllerExpandVolume %s: %v", id, err)
	}
	return res
}

func (h *harness) nodeExpand(id, volumePath, staging string, bytes int64) (*csi.NodeExpandVolumeResponse, error) {
	return h.node.NodeExpandVolume(ctx(h.t), &csi.NodeExpandVolumeRequest{
		VolumeId: id, VolumePath: volumePath, StagingTargetPath: staging, CapacityRange: &csi.CapacityRange{RequiredBytes: bytes},
	})
}

// writeFiles writes n files of random bytes into dir and returns their SHA-256 sums.
func writeFiles(t *testing.T, dir string, n int, bytes int64) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("data-%d", i))
		f, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.New()
		if _, err := io.CopyN(io.MultiWriter(f, sum), rand.Reader, bytes); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		sums[filepath.Base(name)] = hex.EncodeToString(sum.Sum(nil))
	}
	return sums
}

func checkFiles(t *testing.T, dir string, sums map[string]string) {
	t.Helper()
	for name, want := range sums {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("the data is gone: %v", err)
		}
		sum := sha256.New()
		_, err = io.Copy(sum, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(sum.Sum(nil)); got != want {
			t.Fatalf("%s changed: sha256 %s, written as %s", name, got, want)
		}
	}
}

// dfBytes is the filesystem's size as df reports it (statfs blocks).
func dfBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks) * st.Bsize
}

// near checks that df's size is the volume's less a filesystem's overhead (under 8 %: a 1 GiB
// XFS keeps 64 MiB for its log).
func near(t *testing.T, what string, got, volume int64) {
	t.Helper()
	if got > volume || got < volume-volume*8/100 {
		t.Fatalf("%s: df reports %d bytes for a %d-byte volume", what, got, volume)
	}
}

func (h *harness) opLog() []opRecord {
	h.t.Helper()
	f, err := os.Open(filepath.Join(h.root, "operations.jsonl"))
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	var out []opRecord
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		var rec opRecord
		if err := json.Unmarshal(scanner.Bytes(), &rec); err != nil {
			h.t.Fatalf("operation log line %q: %v", scanner.Text(), err)
		}
		out = append(out, rec)
	}
	return out
}

// growths are the end records that grew something, for one volume and layer.
func (h *harness) growths(id, layer string) []opRecord {
	var out []opRecord
	for _, r := range h.opLog() {
		if r.Phase == "end" && r.Volume == id && r.Layer == layer && r.Result == resultGrown {
			out = append(out, r)
		}
	}
	return out
}

func wantCode(t *testing.T, err error, code codes.Code, contains string) {
	t.Helper()
	if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), contains) {
		t.Fatalf("want %v containing %q, got %v", code, contains, err)
	}
}
