package main

// The driver on real loop devices and filesystems (as root): create, stage, publish, write
// data, grow online and unmounted, restart the driver and the "node", and check df, the data's
// checksums, the operation log and that teardown leaves no device or mount.

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

func TestXFSGrowsOnlineWithTheDataIntact(t *testing.T) {
	h := newHarness(t)
	c := mountCap(fsXFS)
	vol := h.create("pvc-xfs", c, gib)
	if vol.GetCapacityBytes() != gib {
		t.Fatalf("capacity %d, want %d", vol.GetCapacityBytes(), gib)
	}
	staging := h.stage("pvc-xfs", c)
	target := h.publish("pvc-xfs", c, "pod-a")
	near(t, "before", dfBytes(t, target), gib)
	sums := writeFiles(t, target, 4, 8*mib)

	stats, err := h.node.NodeGetVolumeStats(ctx(t), &csi.NodeGetVolumeStatsRequest{VolumeId: "pvc-xfs", VolumePath: target})
	if err != nil {
		t.Fatal(err)
	}
	bytes, inodes := stats.GetUsage()[0], stats.GetUsage()[1]
	if bytes.GetUnit() != csi.VolumeUsage_BYTES || bytes.GetTotal() != dfBytes(t, target) || bytes.GetUsed() < 32*mib || bytes.GetAvailable() > bytes.GetTotal()-32*mib {
		t.Fatalf("byte usage %v does not show the 32 MiB written", bytes)
	}
	if inodes.GetUnit() != csi.VolumeUsage_INODES || inodes.GetUsed() < 4 || inodes.GetTotal() <= inodes.GetUsed() {
		t.Fatalf("inode usage %v", inodes)
	}

	res := h.controllerExpand("pvc-xfs", 2*gib)
	if res.GetCapacityBytes() != 2*gib || !res.GetNodeExpansionRequired() {
		t.Fatalf("ControllerExpandVolume: %v", res)
	}
	near(t, "grown file, filesystem not yet", dfBytes(t, target), gib)
	if _, err := h.nodeExpand("pvc-xfs", target, staging, 2*gib); err != nil {
		t.Fatalf("NodeExpandVolume: %v", err)
	}
	near(t, "after NodeExpandVolume", dfBytes(t, target), 2*gib)
	checkFiles(t, target, sums)
	stats, err = h.node.NodeGetVolumeStats(ctx(t), &csi.NodeGetVolumeStatsRequest{VolumeId: "pvc-xfs", VolumePath: target})
	if err != nil || stats.GetUsage()[0].GetTotal() != dfBytes(t, target) {
		t.Fatalf("stats after growth: %v %v", stats, err)
	}

	// Repeats (a retried call, a restarted kubelet) change nothing.
	h.controllerExpand("pvc-xfs", 2*gib)
	if _, err := h.nodeExpand("pvc-xfs", target, staging, 2*gib); err != nil {
		t.Fatal(err)
	}
	files, fsGrowths := h.growths("pvc-xfs", "file"), h.growths("pvc-xfs", "filesystem")
	if len(files) != 1 || files[0].Op != "ControllerExpandVolume" || *files[0].SizeBefore != gib || *files[0].SizeAfter != 2*gib {
		t.Fatalf("want one file growth from 1 GiB to 2 GiB in the log, got %+v", files)
	}
	if len(fsGrowths) != 1 || fsGrowths[0].Op != "NodeExpandVolume" || !*fsGrowths[0].Online ||
		*fsGrowths[0].SizeBefore != gib || *fsGrowths[0].SizeAfter != 2*gib {
		t.Fatalf("want one online filesystem growth from 1 GiB to 2 GiB in the log, got %+v", fsGrowths)
	}

	h.unpublish("pvc-xfs", target)
	h.unstage("pvc-xfs")
	if left := h.loopsUnder(); len(left) != 0 {
		t.Fatalf("loop devices left after unstaging: %v", left)
	}
	if _, err := h.controller.DeleteVolume(ctx(t), &csi.DeleteVolumeRequest{VolumeId: "pvc-xfs"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.root, "volumes", "pvc-xfs")); !os.IsNotExist(err) {
		t.Fatalf("the volume's directory is still there: %v", err)
	}
}

func TestExt4GrowsOnlineWithTheCapabilityElseWhenStagedNext(t *testing.T) {
	h := newHarness(t)
	c := mountCap("") // the default, ext4
	h.create("pvc-ext4", c, gib)
	staging := h.stage("pvc-ext4", c)
	target := h.publish("pvc-ext4", c, "pod-a")
	sums := writeFiles(t, target, 3, 4*mib)
	h.controllerExpand("pvc-ext4", 2*gib)

	_, err := h.nodeExpand("pvc-ext4", target, staging, 2*gib)
	if hasCapability(capSysResource) {
		if err != nil {
			t.Fatalf("online ext4 growth with CAP_SYS_RESOURCE: %v", err)
		}
		near(t, "after online growth", dfBytes(t, target), 2*gib)
		checkFiles(t, target, sums)
		return
	}
	wantCode(t, err, codes.FailedPrecondition, "CAP_SYS_RESOURCE")
	near(t, "after the refused online growth", dfBytes(t, target), gib)

	// Without the capability it grows unmounted, when staged next (a pod restarted).
	h.unpublish("pvc-ext4", target)
	h.unstage("pvc-ext4")
	h.stage("pvc-ext4", c)
	target = h.publish("pvc-ext4", c, "pod-b")
	near(t, "after staging again", dfBytes(t, target), 2*gib)
	checkFiles(t, target, sums)
	if _, err := h.nodeExpand("pvc-ext4", target, staging, 2*gib); err != nil {
		t.Fatalf("NodeExpandVolume once the filesystem fills its device: %v", err)
	}
	grown := h.growths("pvc-ext4", "filesystem")
	if len(grown) != 1 || grown[0].Op != "NodeStageVolume" || *grown[0].Online || *grown[0].SizeBefore != gib || *grown[0].SizeAfter != 2*gib {
		t.Fatalf("want one unmounted growth by NodeStageVolume from 1 GiB to 2 GiB, got %+v", grown)
	}
}

func TestNodeExpansionOfAnUnstagedVolume(t *testing.T) {
	for _, fsType := range []string{fsExt4, fsXFS} {
		t.Run(fsType, func(t *testing.T) {
			h := newHarness(t)
			c := mountCap(fsType)
			h.create("pvc-off", c, gib)
			h.stage("pvc-off", c)
			target := h.publish("pvc-off", c, "pod-a")
			sums := writeFiles(t, target, 2, 4*mib)
			h.unpublish("pvc-off", target)
			h.unstage("pvc-off")

			h.controllerExpand("pvc-off", 2*gib)
			if _, err := h.nodeExpand("pvc-off", target, "", 2*gib); err != nil {
				t.Fatalf("NodeExpandVolume of an unstaged volume: %v", err)
			}
			if left := h.loopsUnder(); len(left) != 0 {
				t.Fatalf("the loop device attached for the expansion is still there: %v", left)
			}
			grown := h.growths("pvc-off", "filesystem")
			if len(grown) != 1 || *grown[0].Online || *grown[0].SizeAfter != 2*gib {
				t.Fatalf("want one unmounted growth to 2 GiB, got %+v", grown)
			}
			h.stage("pvc-off", c)
			target = h.publish("pvc-off", c, "pod-b")
			near(t, "staged after growth", dfBytes(t, target), 2*gib)
			checkFiles(t, target, sums)
		})
	}
}

func TestDriverAndNodeRestarts(t *testing.T) {
	h := newHarness(t)
	c := mountCap(fsXFS)
	h.create("pvc-r", c, gib)
	staging := h.stage("pvc-r", c)
	target := h.publish("pvc-r", c, "pod-a")
	sums := writeFiles(t, target, 2, 4*mib)
	mountsBefore, _ := mountPointsUnder(h.targetRoot)

	// A restarted driver (or kubelet) repeating every call: nothing is attached or mounted twice.
	h.restart()
	h.stage("pvc-r", c)
	h.publish("pvc-r", c, "pod-a")
	if loops := h.loopsUnder(); len(loops) != 1 {
		t.Fatalf("want the one loop device, got %v", loops)
	}
	if mounts, _ := mountPointsUnder(h.targetRoot); !slices.Equal(mounts, mountsBefore) {
		t.Fatalf("mounts changed across a driver restart: %v, then %v", mountsBefore, mounts)
	}

	// A restarted node: no mounts, no loop devices; staging and publishing set them up again.
	h.nodeRestart()
	if loops := h.loopsUnder(); len(loops) != 0 {
		t.Fatalf("a node restart should leave no loop device, got %v", loops)
	}
	h.stage("pvc-r", c)
	h.publish("pvc-r", c, "pod-a")
	checkFiles(t, target, sums)

	// And growth works on the volume set up again.
	h.controllerExpand("pvc-r", 2*gib)
	if _, err := h.nodeExpand("pvc-r", target, staging, 2*gib); err != nil {
		t.Fatal(err)
	}
	near(t, "after growth", dfBytes(t, target), 2*gib)
	checkFiles(t, target, sums)

	// A driver killed mid-call leaves a start line without an end; every finished call has both.
	open := map[string]int{}
	for _, r := range h.opLog() {
		switch r.Phase {
		case "start":
			open[r.OpID]++
		case "end":
			open[r.OpID]--
		default:
			t.Fatalf("operation log line with phase %q", r.Phase)
		}
	}
	for id, n := range open {
		if n != 0 {
			t.Fatalf("operation %s has %d more start than end lines", id, n)
		}
	}
}

func TestBlockVolumeGrowsWithItsData(t *testing.T) {
	h := newHarness(t)
	c := blockCap()
	h.create("pvc-blk", c, 64*mib)
	h.stage("pvc-blk", c)
	target := h.publish("pvc-blk", c, "pod-a")
	data := make([]byte, mib)
	for i := range data {
		data[i] = byte(i * 7)
	}
	f, err := os.OpenFile(target, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 63*mib); err != nil {
		t.Fatal(err)
	}
	f.Sync()
	f.Close()

	h.controllerExpand("pvc-blk", 128*mib)
	if _, err := h.nodeExpand("pvc-blk", target, h.stagingPath("pvc-blk"), 128*mib); err != nil {
		t.Fatal(err)
	}
	f, err = os.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd) // a block device's end is its size
	if err != nil || size != 128*mib {
		t.Fatalf("device size %d (%v), want %d", size, err, 128*mib)
	}
	got := make([]byte, mib)
	if _, err := f.ReadAt(got, 63*mib); err != nil || !slices.Equal(got, data) {
		t.Fatalf("the block data changed (%v)", err)
	}
	f.Close()
	if grown := h.growths("pvc-blk", "device"); len(grown) != 1 || *grown[0].SizeAfter != 128*mib {
		t.Fatalf("want one device growth to 128 MiB, got %+v", grown)
	}
	h.unpublish("pvc-blk", target)
	h.unstage("pvc-blk")
	if left := h.loopsUnder(); len(left) != 0 {
		t.Fatalf("loop devices left: %v", left)
	}
}

func TestRefusals(t *testing.T) {
	h := newHarness(t, func(c *config) { c.maxVolumes = 2 })
	c := mountCap(fsExt4)
	create := func(name string, vc *csi.VolumeCapability, bytes int64) error {
		_, err := h.controller.CreateVolume(ctx(t), &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: []*csi.VolumeCapability{vc}, CapacityRange: &csi.CapacityRange{RequiredBytes: bytes}})
		return err
	}
	wantCode(t, create("../escape", c, gib), codes.InvalidArgument, "volume name")
	wantCode(t, create("a/b", c, gib), codes.InvalidArgument, "volume name")
	wantCode(t, create("big", c, 5*gib), codes.OutOfRange, "per-volume cap")
	wantCode(t, create("btrfs", mountCap("btrfs"), gib), codes.InvalidArgument, "only ext4 and xfs")
	multi := mountCap(fsExt4)
	multi.AccessMode.Mode = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	wantCode(t, create("multi", multi, gib), codes.InvalidArgument, "single-node")

	// Idempotent creation; a different request for the same name is refused.
	first := h.create("pvc-1", c, gib)
	if again := h.create("pvc-1", c, gib); again.GetCapacityBytes() != first.GetCapacityBytes() {
		t.Fatalf("a repeated CreateVolume gave %v, first %v", again, first)
	}
	wantCode(t, create("pvc-1", c, 2*gib), codes.AlreadyExists, "does not match")
	wantCode(t, create("pvc-1", mountCap(fsXFS), gib), codes.AlreadyExists, "does not match")
	h.create("pvc-2", c, gib)
	wantCode(t, create("pvc-3", c, gib), codes.ResourceExhausted, "--max-volumes")
	_, err := h.controller.ControllerExpandVolume(ctx(t), &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-1", CapacityRange: &csi.CapacityRange{RequiredBytes: 5 * gib}})
	wantCode(t, err, codes.OutOfRange, "per-volume cap")
	_, err = h.controller.ControllerExpandVolume(ctx(t), &csi.ControllerExpandVolumeRequest{VolumeId: "nope", CapacityRange: &csi.CapacityRange{RequiredBytes: gib}})
	wantCode(t, err, codes.NotFound, "does not exist")

	// Paths outside the target root, directly or through a symbolic link.
	_, err = h.node.NodeStageVolume(ctx(t), &csi.NodeStageVolumeRequest{VolumeId: "pvc-1", StagingTargetPath: filepath.Join(h.dir, "elsewhere"), VolumeCapability: c})
	wantCode(t, err, codes.InvalidArgument, "outside")
	_, err = h.node.NodeStageVolume(ctx(t), &csi.NodeStageVolumeRequest{VolumeId: "pvc-1", StagingTargetPath: h.targetRoot + "/../x", VolumeCapability: c})
	wantCode(t, err, codes.InvalidArgument, "clean path")
	if err := os.Symlink(h.dir, filepath.Join(h.targetRoot, "link")); err != nil {
		t.Fatal(err)
	}
	_, err = h.node.NodeStageVolume(ctx(t), &csi.NodeStageVolumeRequest{VolumeId: "pvc-1", StagingTargetPath: filepath.Join(h.targetRoot, "link", "staging"), VolumeCapability: c})
	wantCode(t, err, codes.InvalidArgument, "symbolic link")
	if _, err := os.Stat(filepath.Join(h.dir, "staging")); !os.IsNotExist(err) {
		t.Fatalf("a refused path was created: %v", err)
	}

	// Order and state: publish before stage, delete while staged, a filesystem mismatch.
	_, err = h.node.NodePublishVolume(ctx(t), &csi.NodePublishVolumeRequest{VolumeId: "pvc-1", StagingTargetPath: h.stagingPath("pvc-1"), TargetPath: h.targetPath("pvc-1", "p"), VolumeCapability: c})
	wantCode(t, err, codes.FailedPrecondition, "not staged")
	_, err = h.node.NodeStageVolume(ctx(t), &csi.NodeStageVolumeRequest{VolumeId: "pvc-1", StagingTargetPath: h.stagingPath("pvc-1"), VolumeCapability: mountCap(fsXFS)})
	wantCode(t, err, codes.InvalidArgument, "holds ext4")
	h.stage("pvc-1", c)
	_, err = h.controller.DeleteVolume(ctx(t), &csi.DeleteVolumeRequest{VolumeId: "pvc-1"})
	wantCode(t, err, codes.FailedPrecondition, "still attached")
	_, err = h.nodeExpand("pvc-1", h.stagingPath("pvc-1"), "", 2*gib)
	wantCode(t, err, codes.FailedPrecondition, "has not grown it")
	h.unstage("pvc-1")
	h.unstage("pvc-1") // idempotent
	if _, err := h.controller.DeleteVolume(ctx(t), &csi.DeleteVolumeRequest{VolumeId: "pvc-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.controller.DeleteVolume(ctx(t), &csi.DeleteVolumeRequest{VolumeId: "pvc-1"}); err != nil {
		t.Fatalf("a repeated DeleteVolume: %v", err)
	}
}

func TestLeftoversOfAnInterruptedCallAreRemovedAtStart(t *testing.T) {
	h := newHarness(t)
	half := filepath.Join(h.root, "volumes", ".creating-pvc-x-0000")
	if err := os.MkdirAll(half, 0o700); err != nil {
		t.Fatal(err)
	}
	h.restart()
	if _, err := os.Stat(half); !os.IsNotExist(err) {
		t.Fatalf("a half-made volume survived a restart: %v", err)
	}
	if n, _ := h.driver.store.count(); n != 0 {
		t.Fatalf("%d volumes, want 0", n)
	}
}

func TestIdentityAndCapabilities(t *testing.T) {
	h := newHarness(t)
	info, err := h.identity.GetPluginInfo(ctx(t), &csi.GetPluginInfoRequest{})
	if err != nil || info.GetName() != "loopfs.test.csi-resizer.local" {
		t.Fatalf("GetPluginInfo: %v %v", info, err)
	}
	plugin, err := h.identity.GetPluginCapabilities(ctx(t), &csi.GetPluginCapabilitiesRequest{})
	if err != nil || plugin.GetCapabilities()[1].GetVolumeExpansion().GetType() != csi.PluginCapability_VolumeExpansion_ONLINE {
		t.Fatalf("plugin capabilities: %v %v", plugin, err)
	}
	node, err := h.node.NodeGetCapabilities(ctx(t), &csi.NodeGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var rpcs []csi.NodeServiceCapability_RPC_Type
	for _, c := range node.GetCapabilities() {
		rpcs = append(rpcs, c.GetRpc().GetType())
	}
	for _, want := range []csi.NodeServiceCapability_RPC_Type{csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME, csi.NodeServiceCapability_RPC_EXPAND_VOLUME, csi.NodeServiceCapability_RPC_GET_VOLUME_STATS} {
		if !slices.Contains(rpcs, want) {
			t.Fatalf("node capabilities %v lack %v", rpcs, want)
		}
	}
}

// Two driver processes on one root (a node plugin and a controller replica of a Deployment, or
// two replicas during a leader change) asked to grow the same volume at once: the per-volume file
// lock lets one grow it and the other find it grown, so the log shows one growth, and the second
// call starts only after the first has ended (the delay is a back-end's working time).
func TestDriversSharingARootGrowAVolumeOnce(t *testing.T) {
	delay := 300 * time.Millisecond
	h := newHarness(t, func(c *config) { c.controllerExpandDelay = delay })
	h.create("pvc-s", mountCap(fsXFS), gib)
	c := h.config()
	c.controllerExpandDelay = delay
	other, err := newDriver(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.log.file.Close() })

	req := &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-s", CapacityRange: &csi.CapacityRange{RequiredBytes: 2 * gib}}
	errs := make(chan error, 2)
	started := time.Now()
	for _, d := range []*driver{h.driver, other} {
		go func() {
			res, err := (&controllerServer{d: d}).ControllerExpandVolume(ctx(t), req)
			if err == nil && res.GetCapacityBytes() != 2*gib {
				err = fmt.Errorf("answered %d bytes", res.GetCapacityBytes())
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(started); took < 2*delay {
		t.Fatalf("both calls ended after %v: they ran side by side, not one after the other", took)
	}
	if g := h.growths("pvc-s", "file"); len(g) != 1 {
		t.Fatalf("want one file growth, got %+v", g)
	}
	var phases []string
	for _, r := range h.opLog() {
		if r.Op == "ControllerExpandVolume" {
			phases = append(phases, r.Phase+":"+r.Result)
		}
	}
	if want := []string{"start:", "end:grown", "start:", "end:unchanged"}; !slices.Equal(phases, want) {
		t.Fatalf("ControllerExpandVolume log lines %v, want %v", phases, want)
	}
}

// A node or containerd restart can kill resize2fs in NodeStageVolume, or the driver right after it
// and before the undo file is removed. The next stage replays the undo file (the filesystem as it
// was before that resize), checks the filesystem and grows it again, with the data intact. Here the
// resize ran to its end by hand, which leaves what the driver would find after the second case.
func TestAnInterruptedUnmountedExt4GrowthIsUndoneThenDoneAgain(t *testing.T) {
	h := newHarness(t)
	c := mountCap("") // ext4
	id := h.create("pvc-undo", c, gib).GetVolumeId()
	h.stage(id, c)
	target := h.publish(id, c, "pod-a")
	sums := writeFiles(t, target, 3, 4*mib)
	h.unpublish(id, target)
	h.unstage(id)
	h.controllerExpand(id, 2*gib)

	undoFile := ext4UndoFile(filepath.Join(h.root, "scratch"), id)
	if out, err := exec.Command("resize2fs", "-z", undoFile, h.driver.store.backingFile(id)).CombinedOutput(); err != nil {
		t.Fatalf("resize2fs by hand: %v\n%s", err, out)
	}

	h.stage(id, c)
	target = h.publish(id, c, "pod-b")
	near(t, "after staging again", dfBytes(t, target), 2*gib)
	checkFiles(t, target, sums)
	if _, err := os.Stat(undoFile); !os.IsNotExist(err) {
		t.Fatalf("the undo file is still there after the stage (%v): a later replay would write old blocks back", err)
	}
	grown := h.growths(id, "filesystem")
	if len(grown) != 1 || grown[0].Op != "NodeStageVolume" || *grown[0].SizeBefore != gib || *grown[0].SizeAfter != 2*gib {
		t.Fatalf("want one growth by NodeStageVolume from 1 GiB (the undone resize) to 2 GiB, got %+v", grown)
	}
}
