package main

// The volumes on disk. Each volume is one directory, <root>/volumes/<id>, holding its backing
// file (disk.img, sparse) and its record (volume.json: name, mode, filesystem type). Nothing
// about a volume lives only in memory: its capacity is the backing file's size, and whether it
// is attached or mounted is read from the kernel each time, so a restarted driver, kubelet or
// node finds every volume as it is.
//
// A volume appears under its final name only once complete: it is built in a ".creating-"
// directory and renamed into place, and removed by renaming it to ".deleting-" first, so a crash
// at any point leaves either a whole volume or a leftover that the next start removes.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30

	modeFilesystem = "filesystem"
	modeBlock      = "block"

	fsExt4 = "ext4"
	fsXFS  = "xfs"

	// Smallest volume of each kind: mkfs.xfs refuses less than 300 MiB; ext4 volumes are whole
	// block groups (see sizeUnit).
	minExt4Bytes  = ext4GroupBytes
	minXFSBytes   = 300 * mib
	minBlockBytes = mib

	// One ext4 block group at 4 KiB blocks. resize2fs leaves out a last group too small for its
	// own metadata, so a volume of whole groups is the only kind whose filesystem grows to fill
	// its device exactly, and "the filesystem is smaller than its device" then always means
	// "not grown yet".
	ext4GroupBytes = 128 * mib

	// What CreateVolume makes when the request names no size.
	defaultVolumeBytes = gib
)

// A volume ID is a directory name under <root>/volumes: no separators, no leading dot.
var volumeIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// volumeRecord is volume.json.
type volumeRecord struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Mode    string    `json:"mode"`
	FsType  string    `json:"fsType,omitempty"`
	Created time.Time `json:"created"`
}

// store is the volumes directory of one driver root.
type store struct {
	dir string // <root>/volumes
	// noSync skips the fsync after a growth (--fsync=false): only for tests whose machine never
	// crashes, where the page cache outlives every process and fsync adds only the disk's latency.
	noSync bool
}

func openStore(root string) (*store, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("the driver root %q is not an absolute path", root)
	}
	s := &store{dir: filepath.Join(filepath.Clean(root), "volumes")}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	return s, nil
}

// removeLeftovers deletes what an interrupted CreateVolume or DeleteVolume left: volumes half
// made or half removed. Only this driver writes under its root, so none of them is in use.
func (s *store) removeLeftovers() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".creating-") || strings.HasPrefix(e.Name(), ".deleting-") {
			if err := os.RemoveAll(filepath.Join(s.dir, e.Name())); err != nil {
				return removed, err
			}
			removed = append(removed, e.Name())
		}
	}
	return removed, nil
}

func validVolumeID(id string) error {
	if !volumeIDPattern.MatchString(id) {
		return fmt.Errorf("volume ID %q is not 1 to 128 letters, digits, '.', '_' or '-' starting with a letter or digit", id)
	}
	return nil
}

func (s *store) volumeDir(id string) string { return filepath.Join(s.dir, id) }

// BackingFile is the path of a volume's sparse file.
func (s *store) backingFile(id string) string { return filepath.Join(s.dir, id, "disk.img") }

var errNoVolume = errors.New("no such volume")

// get reads a volume's record; errNoVolume when there is none.
func (s *store) get(id string) (*volumeRecord, error) {
	if err := validVolumeID(id); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(s.volumeDir(id), "volume.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoVolume
	}
	if err != nil {
		return nil, err
	}
	var rec volumeRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("volume %s: reading volume.json: %w", id, err)
	}
	return &rec, nil
}

// size is the backing file's size in bytes: the volume's capacity.
func (s *store) size(id string) (int64, error) {
	info, err := os.Stat(s.backingFile(id))
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

func (s *store) count() (int, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n, nil
}

// create makes a volume of sizeBytes: the sparse file, its filesystem (format is called on the
// file before it is renamed into place; nil for block volumes), and its record.
func (s *store) create(rec volumeRecord, sizeBytes int64, format func(file string) error) error {
	tmp := filepath.Join(s.dir, ".creating-"+rec.ID+"-"+randomSuffix())
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	fail := func(err error) error {
		_ = os.RemoveAll(tmp)
		return err
	}
	file := filepath.Join(tmp, "disk.img")
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fail(err)
	}
	if err := f.Truncate(sizeBytes); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if format != nil {
		if err := format(file); err != nil {
			return fail(err)
		}
	}
	if err := writeFileSynced(filepath.Join(tmp, "volume.json"), rec); err != nil {
		return fail(err)
	}
	if err := syncPath(file); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, s.volumeDir(rec.ID)); err != nil {
		return fail(err)
	}
	return syncPath(s.dir)
}

// remove deletes a volume's directory; nothing when there is none.
func (s *store) remove(id string) error {
	if _, err := os.Stat(s.volumeDir(id)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	gone := filepath.Join(s.dir, ".deleting-"+id+"-"+randomSuffix())
	if err := os.Rename(s.volumeDir(id), gone); err != nil {
		return err
	}
	if err := syncPath(s.dir); err != nil {
		return err
	}
	return os.RemoveAll(gone)
}

// grow makes the backing file newBytes long (sparse: nothing is written) and syncs it.
func (s *store) grow(id string, newBytes int64) error {
	f, err := os.OpenFile(s.backingFile(id), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(newBytes); err != nil {
		return err
	}
	if s.noSync {
		return nil
	}
	return f.Sync()
}

func writeFileSynced(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// minBytes is the smallest volume of a mode and filesystem type.
func minBytes(mode, fsType string) int64 {
	switch {
	case mode == modeBlock:
		return minBlockBytes
	case fsType == fsXFS:
		return minXFSBytes
	default:
		return minExt4Bytes
	}
}

// sizeUnit is what a volume's size is a multiple of.
func sizeUnit(mode, fsType string) int64 {
	if mode == modeFilesystem && fsType == fsExt4 {
		return ext4GroupBytes
	}
	return mib
}

// volumeBytes picks the size for a capacity range: the required bytes rounded up to the unit,
// at least the minimum (or the default when nothing is required), at most the limit and the
// driver's per-volume cap. reason says why when no size fits (size is then 0).
func volumeBytes(required, limit, unit, minimum, maxPerVolume int64) (size int64, reason string) {
	if required < 0 || limit < 0 {
		return 0, "a negative capacity"
	}
	size = required
	if size == 0 {
		size = defaultVolumeBytes
		if limit > 0 && size > limit {
			size = limit
		}
	}
	size = max(roundUp(size, unit), minimum)
	if limit > 0 && size > limit {
		return 0, fmt.Sprintf("%d bytes (required %d, rounded up to a multiple of %d and at least %d) exceeds the limit of %d bytes", size, required, unit, minimum, limit)
	}
	if size > maxPerVolume {
		return 0, fmt.Sprintf("%d bytes exceeds this driver's per-volume cap of %d bytes (--max-volume-size)", size, maxPerVolume)
	}
	return size, ""
}

func roundUp(n, unit int64) int64 { return (n + unit - 1) / unit * unit }
