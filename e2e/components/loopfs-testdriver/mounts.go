package main

// Mounts and the paths the driver may touch. Whether a path is mounted, and with what, is read
// from /proc/self/mountinfo on every call (k8s.io/mount-utils parses it), never remembered.
// Mounting is done with mount(2) directly: the image then needs no util-linux mount, and the
// flags the driver passes are exactly those below.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
	mountutils "k8s.io/mount-utils"
)

func mountInfo() ([]mountutils.MountInfo, error) {
	return mountutils.ParseMountInfo("/proc/self/mountinfo")
}

// mountAt is the topmost mount on path, or nil when path is not a mount point.
func mountAt(path string) (*mountutils.MountInfo, error) {
	infos, err := mountInfo()
	if err != nil {
		return nil, err
	}
	path = filepath.Clean(path)
	var top *mountutils.MountInfo
	for i := range infos {
		if infos[i].MountPoint == path {
			top = &infos[i] // later lines are mounted on top of earlier ones
		}
	}
	return top, nil
}

// mountsOfDevice lists the mounts of the block device's filesystem (any mount point, bind
// mounts included) in this mount namespace.
func mountsOfDevice(dev string) ([]mountutils.MountInfo, error) {
	major, minor, err := deviceNumber(dev)
	if err != nil {
		return nil, err
	}
	infos, err := mountInfo()
	if err != nil {
		return nil, err
	}
	var out []mountutils.MountInfo
	for _, m := range infos {
		if m.Major == major && m.Minor == minor {
			out = append(out, m)
		}
	}
	return out, nil
}

// isMountOf tells whether m mounts the block device's filesystem.
func isMountOf(m *mountutils.MountInfo, dev string) (bool, error) {
	if m == nil {
		return false, nil
	}
	major, minor, err := deviceNumber(dev)
	if err != nil {
		return false, err
	}
	return m.Major == major && m.Minor == minor, nil
}

// confine checks that path is an absolute, clean path strictly inside root and that no existing
// part of it leads out of root through a symbolic link.
func confine(root, path, what string) error {
	if path == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return fmt.Errorf("%s %q is not an absolute, clean path", what, path)
	}
	if !strings.HasPrefix(path, root+"/") {
		return fmt.Errorf("%s %q is outside %s, the only tree this driver mounts in (--target-root)", what, path, root)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", root, err)
	}
	existing := path
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		existing = filepath.Dir(existing)
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", existing, err)
	}
	if resolved != realRoot && !strings.HasPrefix(resolved, realRoot+"/") {
		return fmt.Errorf("%s %q leads out of %s through a symbolic link (%s is %s)", what, path, root, existing, resolved)
	}
	return nil
}

// Mount options mount(2) takes as flags; anything else goes to the filesystem as data.
var mountFlagNames = map[string]uintptr{
	"ro": unix.MS_RDONLY, "rw": 0, "defaults": 0,
	"noatime": unix.MS_NOATIME, "nodiratime": unix.MS_NODIRATIME, "relatime": unix.MS_RELATIME,
	"strictatime": unix.MS_STRICTATIME, "lazytime": unix.MS_LAZYTIME,
	"nosuid": unix.MS_NOSUID, "nodev": unix.MS_NODEV, "noexec": unix.MS_NOEXEC,
	"sync": unix.MS_SYNCHRONOUS, "dirsync": unix.MS_DIRSYNC,
}

// mountOptions splits CSI mount flags ("noatime", "ro,nodev", "discard") into mount(2) flags
// and filesystem data.
func mountOptions(options []string) (flags uintptr, data string) {
	var rest []string
	for _, option := range options {
		for _, o := range strings.Split(option, ",") {
			o = strings.TrimSpace(o)
			if o == "" {
				continue
			}
			if f, ok := mountFlagNames[o]; ok {
				flags |= f
			} else {
				rest = append(rest, o)
			}
		}
	}
	return flags, strings.Join(rest, ",")
}

func mountFilesystem(dev, target, fsType string, options []string) error {
	flags, data := mountOptions(options)
	if err := unix.Mount(dev, target, fsType, flags, data); err != nil {
		return fmt.Errorf("mount -t %s %s %s (flags %#x, options %q): %w", fsType, dev, target, flags, data, err)
	}
	return nil
}

// bindMount mounts source on target, read-only when asked (a bind mount takes ro only through
// a remount).
func bindMount(source, target string, readOnly bool) error {
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mount --bind %s %s: %w", source, target, err)
	}
	if readOnly {
		if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			_ = unix.Unmount(target, 0)
			return fmt.Errorf("remounting %s read-only: %w", target, err)
		}
	}
	return nil
}

// unmountAll unmounts path until it is no longer a mount point (mounts may be stacked on it).
func unmountAll(path string) error {
	for range 16 {
		m, err := mountAt(path)
		if err != nil {
			return err
		}
		if m == nil {
			return nil
		}
		if err := unix.Unmount(path, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("umount %s: %w", path, err)
		}
	}
	return fmt.Errorf("%s is still a mount point after 16 unmounts", path)
}
