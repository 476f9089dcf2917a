package main

// The parts that need no root: sizing, names, mount options and path confinement.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestVolumeBytes(t *testing.T) {
	cases := []struct {
		name                  string
		required, limit, unit int64
		minimum               int64
		want                  int64
		refused               string
	}{
		{"exact", gib, 0, mib, mib, gib, ""},
		{"rounded up to the unit", gib + 1, 0, ext4GroupBytes, ext4GroupBytes, gib + ext4GroupBytes, ""},
		{"at least the minimum", mib, 0, mib, minXFSBytes, minXFSBytes, ""},
		{"nothing required: the default", 0, 0, mib, mib, defaultVolumeBytes, ""},
		{"nothing required, a smaller limit", 0, 512 * mib, mib, mib, 512 * mib, ""},
		{"the limit below the rounded size", gib + 1, gib + mib/2, mib, mib, 0, "exceeds the limit"},
		{"the per-volume cap", 5 * gib, 0, mib, mib, 0, "per-volume cap"},
		{"negative", -1, 0, mib, mib, 0, "negative"},
	}
	for _, c := range cases {
		got, reason := volumeBytes(c.required, c.limit, c.unit, c.minimum, 4*gib)
		if got != c.want || (c.refused == "") != (reason == "") || !strings.Contains(reason, c.refused) {
			t.Errorf("%s: got %d %q, want %d %q", c.name, got, reason, c.want, c.refused)
		}
	}
}

func TestVolumeIDs(t *testing.T) {
	for _, ok := range []string{"pvc-0b6c1d2e", "rz-pv-1-abcdef", "a", "A.b_c-d"} {
		if err := validVolumeID(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", ".creating-x", "-x", strings.Repeat("a", 129), "a b"} {
		if validVolumeID(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestMountOptions(t *testing.T) {
	flags, data := mountOptions([]string{"noatime", "ro,nodev", "discard", " ", "errors=remount-ro"})
	if flags != unix.MS_NOATIME|unix.MS_RDONLY|unix.MS_NODEV || data != "discard,errors=remount-ro" {
		t.Fatalf("flags %#x data %q", flags, data)
	}
}

func TestConfine(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "in"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "in"), filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{root + "/pods/x/mount", root + "/alias/y"} {
		if err := confine(root, ok, "path"); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "relative/x", root, root + "/../x", root + "x/y", outside + "/y", root + "/out/y", root + "//y"} {
		if confine(root, bad, "path") == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
