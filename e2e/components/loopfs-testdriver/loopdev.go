package main

// Loop devices, through util-linux's losetup. A volume's loop device is never remembered: it is
// looked up by backing file each time (`losetup --associated` matches the file's inode and
// device, so the lookup holds however the file's path is seen), which is what makes a restarted
// driver find the devices its predecessor attached, and a restarted node attach them again.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"k8s.io/klog/v2"
)

// attachLock serialises attaching, so two volumes staged at once never race for the same free
// device in this process (losetup retries that race with other processes itself).
var attachLock sync.Mutex

// run runs a command and returns its standard output; the error carries its output.
func run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	klog.V(4).InfoS("ran", "command", append([]string{name}, args...), "err", err, "stdout", stdout.String(), "stderr", stderr.String())
	if err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()+" "+stdout.String()))
	}
	return stdout.String(), nil
}

// loopDevicesOf lists the loop devices attached to file (usually none or one).
func loopDevicesOf(file string) ([]string, error) {
	out, err := run("losetup", "--list", "--noheadings", "--output", "NAME", "--associated", file)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// attachedLoop is the volume's loop device, or "" when it has none.
func attachedLoop(file string) (string, error) {
	devices, err := loopDevicesOf(file)
	if err != nil || len(devices) == 0 {
		return "", err
	}
	return devices[0], nil
}

// ensureLoop returns the file's loop device, attaching one when it has none. Extra devices on
// the same file (possible only after a crash between two attaches) are detached when unused.
func ensureLoop(file string) (dev string, attached bool, err error) {
	attachLock.Lock()
	defer attachLock.Unlock()
	devices, err := loopDevicesOf(file)
	if err != nil {
		return "", false, err
	}
	if len(devices) > 0 {
		for _, extra := range devices[1:] {
			if mounted, _ := mountsOfDevice(extra); len(mounted) == 0 {
				klog.InfoS("detaching an extra loop device on the same backing file", "device", extra, "file", file)
				_ = detachLoop(extra)
			}
		}
		return devices[0], false, nil
	}
	out, err := run("losetup", "--find", "--show", file)
	if err != nil {
		return "", false, err
	}
	dev = strings.TrimSpace(out)
	if !strings.HasPrefix(dev, "/dev/loop") {
		return "", false, fmt.Errorf("losetup --find --show %s printed %q, not a loop device", file, out)
	}
	return dev, true, nil
}

// refreshLoop makes the device take the backing file's current size.
func refreshLoop(dev string) error {
	_, err := run("losetup", "--set-capacity", dev)
	return err
}

// detachLoop detaches the device. The kernel detaches a device still open elsewhere only once it
// is closed, so the caller checks with loopDevicesOf when it must be gone.
func detachLoop(dev string) error {
	_, err := run("losetup", "--detach", dev)
	return err
}

// loopSize is the device's size in bytes, as the kernel sees it now.
func loopSize(dev string) (int64, error) {
	data, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "size"))
	if err != nil {
		return 0, err
	}
	sectors, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s size: %w", dev, err)
	}
	return sectors * 512, nil
}

// deviceNumber is the device's major and minor number.
func deviceNumber(dev string) (major, minor int, err error) {
	data, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "dev"))
	if err != nil {
		return 0, 0, err
	}
	if _, err := fmt.Sscanf(strings.TrimSpace(string(data)), "%d:%d", &major, &minor); err != nil {
		return 0, 0, fmt.Errorf("%s dev %q: %w", dev, data, err)
	}
	return major, minor, nil
}
