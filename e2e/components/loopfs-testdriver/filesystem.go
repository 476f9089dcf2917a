package main

// Filesystems: making them (mke2fs, mkfs.xfs), measuring them, and growing them to their
// device's size (resize2fs, xfs_growfs). Two types, because of one kernel rule: growing a
// mounted ext4 (EXT4_IOC_RESIZE_FS) needs CAP_SYS_RESOURCE, which root lacks on some machines
// (this project's among them), while growing a mounted XFS needs only CAP_SYS_ADMIN. So ext4
// grows online where the capability is there and otherwise only unmounted (the driver does
// that in NodeStageVolume, before mounting), and XFS grows online everywhere
// (docs/e2e.md, "The loopfs test driver").
//
// A filesystem's size is read from the filesystem itself (its superblock, or XFS's geometry
// ioctl while mounted), so the operation log's "before" and "after" are the filesystem's, not
// the device's.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

const capSysResource = 24 // the capability's number in the kernel ABI

func supportedFsType(fsType string) bool { return fsType == fsExt4 || fsType == fsXFS }

// makeFilesystem formats a backing file (not yet attached). ext4 gets 4 KiB blocks, so a block
// group is 128 MiB, the unit ext4 volumes are sized in (see sizeUnit), and no reserved blocks,
// so what df reports as available is the whole filesystem less its metadata, whoever writes.
func makeFilesystem(file, fsType string) error {
	var err error
	switch fsType {
	case fsExt4:
		_, err = run("mke2fs", "-t", "ext4", "-b", "4096", "-q", "-F", "-m", "0", "-E", "nodiscard", file)
	case fsXFS:
		_, err = run("mkfs.xfs", "-q", "-K", file)
	default:
		err = fmt.Errorf("unsupported filesystem type %q", fsType)
	}
	return err
}

// filesystemBytes is the size of the filesystem on dev (a loop device or a backing file).
// mountPoint is where it is mounted, or "" when it is not.
func filesystemBytes(dev, fsType, mountPoint string) (int64, error) {
	if fsType == fsXFS && mountPoint != "" {
		// A mounted XFS writes its superblock back lazily; its geometry is current.
		return xfsGeometryBytes(mountPoint)
	}
	// ext4 keeps its superblock in the device's page cache, so a read sees it current even
	// while mounted; an unmounted XFS has written everything back.
	buf := make([]byte, 4096)
	f, err := os.Open(dev)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.ReadAt(buf, 0); err != nil {
		return 0, fmt.Errorf("reading the superblock of %s: %w", dev, err)
	}
	switch fsType {
	case fsExt4:
		sb := buf[1024:]
		if binary.LittleEndian.Uint16(sb[56:]) != 0xEF53 {
			return 0, fmt.Errorf("%s holds no ext4 filesystem", dev)
		}
		blocks := uint64(binary.LittleEndian.Uint32(sb[4:]))
		if binary.LittleEndian.Uint32(sb[96:])&0x80 != 0 { // INCOMPAT_64BIT
			blocks |= uint64(binary.LittleEndian.Uint32(sb[0x150:])) << 32
		}
		return int64(blocks) << (10 + binary.LittleEndian.Uint32(sb[24:])), nil
	case fsXFS:
		if string(buf[0:4]) != "XFSB" {
			return 0, fmt.Errorf("%s holds no XFS filesystem", dev)
		}
		return int64(binary.BigEndian.Uint64(buf[8:])) * int64(binary.BigEndian.Uint32(buf[4:])), nil
	}
	return 0, fmt.Errorf("unsupported filesystem type %q", fsType)
}

// xfsGeometry is the kernel's struct xfs_fsop_geom_v1, the geometry version every kernel answers.
type xfsGeometry struct {
	BlockSize, RtExtSize, AgBlocks, AgCount, LogBlocks, SectSize, InodeSize, ImaxPct uint32
	DataBlocks, RtBlocks, RtExtents, LogStart                                        uint64
	UUID                                                                             [16]byte
	SUnit, SWidth                                                                    uint32
	Version                                                                          int32
	Flags, LogSectSize, RtSectSize, DirBlockSize                                     uint32
	_                                                                                uint32 // the C struct's tail padding
}

// XFS_IOC_FSGEOMETRY_V1: _IOR('X', 100, struct xfs_fsop_geom_v1).
var xfsIocFsGeometryV1 = uintptr(2<<30 | unsafe.Sizeof(xfsGeometry{})<<16 | 'X'<<8 | 100)

func xfsGeometryBytes(mountPoint string) (int64, error) {
	f, err := os.Open(mountPoint)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var g xfsGeometry
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), xfsIocFsGeometryV1, uintptr(unsafe.Pointer(&g))); errno != 0 {
		return 0, fmt.Errorf("XFS geometry of %s: %w", mountPoint, errno)
	}
	return int64(g.DataBlocks) * int64(g.BlockSize), nil
}

// errOnlineExt4 is the refusal to grow a mounted ext4 without CAP_SYS_RESOURCE.
var errOnlineExt4 = errors.New("growing a mounted ext4 filesystem needs CAP_SYS_RESOURCE, which this process does not have; " +
	"an ext4 volume grows here only while unmounted, when NodeStageVolume stages it next; use xfs for online growth")

func hasCapability(capability uint) bool {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if hex, ok := strings.CutPrefix(line, "CapEff:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			return err == nil && mask&(1<<capability) != 0
		}
	}
	return false
}

// growFilesystem grows the filesystem on dev to dev's size. mountPoint is where it is mounted
// ("" when it is not); scratch is a directory for a temporary mount (XFS grows only mounted) and
// for the undo file of an unmounted ext4 growth, named after the volume (undoName).
func growFilesystem(dev, fsType, mountPoint, scratch, undoName string) error {
	switch {
	case fsType == fsExt4 && mountPoint != "":
		if !hasCapability(capSysResource) {
			return errOnlineExt4
		}
		_, err := run("resize2fs", dev)
		return err
	case fsType == fsExt4:
		undoFile := ext4UndoFile(scratch, undoName)
		if err := checkExt4(dev); err != nil {
			return err
		}
		if _, err := run("resize2fs", "-z", undoFile, dev); err != nil {
			return err
		}
		return os.Remove(undoFile)
	case fsType == fsXFS && mountPoint != "":
		_, err := run("xfs_growfs", "-d", mountPoint)
		return err
	case fsType == fsXFS:
		dir, err := os.MkdirTemp(scratch, "grow-")
		if err != nil {
			return err
		}
		defer os.Remove(dir)
		if err := mountFilesystem(dev, dir, fsXFS, nil); err != nil {
			return err
		}
		_, growErr := run("xfs_growfs", "-d", dir)
		if err := unmountAll(dir); err != nil {
			return errors.Join(growErr, err)
		}
		return growErr
	}
	return fmt.Errorf("unsupported filesystem type %q", fsType)
}

// undoInterruptedResize replays the undo file an unmounted resize2fs left when it was killed
// part-way (a node or containerd restart during NodeStageVolume): resize2fs moves metadata in
// place, and a half-done move leaves a filesystem e2fsck -p will not repair. e2undo writes back
// every block the resize had changed, so the filesystem is as it was and can be grown again.
// -f: the resize may already have rewritten the superblock the undo file was checked against.
// It runs before every unmounted ext4 stage, growth or not: an undo file left after a resize that
// did finish must not outlive the next mount, or a later replay would write back blocks the
// application has since written.
func undoInterruptedResize(dev, undoFile string) error {
	if _, err := os.Stat(undoFile); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if _, err := run("e2undo", "-f", undoFile, dev); err != nil {
		return fmt.Errorf("undoing an interrupted resize2fs of %s: %w", dev, err)
	}
	return os.Remove(undoFile)
}

// ext4UndoFile is where resize2fs keeps the blocks an unmounted growth of the volume overwrites.
func ext4UndoFile(scratch, id string) string { return filepath.Join(scratch, id+".e2undo") }

// checkExt4 runs e2fsck -f -p, which resize2fs requires of an unmounted filesystem (and which
// replays the journal of one that was not unmounted cleanly). Exit codes 1 and 2 mean errors
// were fixed.
func checkExt4(dev string) error {
	_, err := run("e2fsck", "-f", "-p", dev)
	var exit *exec.ExitError
	if errors.As(err, &exit) && (exit.ExitCode() == 1 || exit.ExitCode() == 2) {
		return nil
	}
	return err
}

// scratchDir is where temporary mounts go: inside the driver's root, never in a kubelet path.
func scratchDir(root string) (string, error) {
	dir := filepath.Join(root, "scratch")
	return dir, os.MkdirAll(dir, 0o700)
}
