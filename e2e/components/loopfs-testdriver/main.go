// Command loopfs-testdriver is a CSI driver for this project's tests, not a product: its
// volumes are real filesystems on one node, so that tests can check what the resizer's
// expansions do to data (docs/e2e.md, "The loopfs test driver"). A volume is a sparse file under
// --root, formatted ext4 or xfs; staging attaches it to a loop device and mounts it, publishing
// bind-mounts it into the pod; ControllerExpandVolume grows the file, NodeExpandVolume the
// device and the filesystem (online). Every change is also a line in an operation log
// (oplog.go) that tests read.
//
// It keeps no state in memory (driver.go), refuses paths outside --target-root, and caps each
// volume's size and the number of volumes. It serves the identity, controller and node services
// on one socket and runs as root, on the node (as a privileged container, or as a process with
// kubelet's mount namespace).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
)

const version = "0.1.0-test"

func main() {
	klog.InitFlags(nil)
	endpoint := flag.String("endpoint", "unix:///csi/csi.sock", "CSI endpoint: a unix socket path or unix:///path")
	name := flag.String("drivername", "loopfs.test.csi-resizer.local", "driver name reported by GetPluginInfo")
	nodeID := flag.String("nodeid", "", "node ID reported by NodeGetInfo (required)")
	root := flag.String("root", "", "directory for the volumes' files, scratch mounts and (by default) the operation log (required)")
	targetRoot := flag.String("target-root", "/var/lib/kubelet", "the only tree staging and publish paths may be in (kubelet's root directory)")
	opLogPath := flag.String("operation-log", "", "the operation log, JSON lines (default <root>/operations.jsonl)")
	defaultFsType := flag.String("default-fstype", fsExt4, "filesystem of a volume whose capability names none: ext4 or xfs")
	maxVolumeSize := flag.String("max-volume-size", "16Gi", "largest volume CreateVolume or ControllerExpandVolume makes (a quantity)")
	maxVolumes := flag.Int("max-volumes", 64, "most volumes the driver holds at once")
	fsync := flag.Bool("fsync", true, "fsync each operation log line and each grown file before answering; false only for tests whose machine never crashes (a killed process loses nothing the page cache holds), where fsync adds only the disk's latency")
	expandDelay := flag.Duration("controller-expand-delay", 0, "how long ControllerExpandVolume works before it grows the file, as a storage back-end would (tests interrupt it there)")
	flag.Parse()

	if *root == "" || *nodeID == "" {
		klog.Fatalf("--root and --nodeid are required")
	}
	if *expandDelay < 0 {
		klog.Fatalf("--controller-expand-delay %v is negative", *expandDelay)
	}
	capBytes, err := resource.ParseQuantity(*maxVolumeSize)
	if err != nil {
		klog.Fatalf("--max-volume-size %q: %v", *maxVolumeSize, err)
	}
	if *opLogPath == "" {
		*opLogPath = filepath.Join(*root, "operations.jsonl")
	}
	d, err := newDriver(config{
		name: *name, version: version, nodeID: *nodeID,
		root: filepath.Clean(*root), targetRoot: filepath.Clean(*targetRoot), opLogPath: *opLogPath,
		defaultFsType: *defaultFsType, maxVolumeBytes: capBytes.Value(), maxVolumes: *maxVolumes,
		controllerExpandDelay: *expandDelay, fsync: *fsync,
	})
	if err != nil {
		klog.Fatalf("%v", err)
	}

	socket := strings.TrimPrefix(*endpoint, "unix://")
	if err := os.Remove(socket); err != nil && !os.IsNotExist(err) {
		klog.Fatalf("removing stale socket %s: %v", socket, err)
	}
	listener, err := net.Listen("unix", socket)
	if err != nil {
		klog.Fatalf("listening on %s: %v", socket, err)
	}
	server := newServer(d)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() { <-ctx.Done(); server.GracefulStop() }()
	klog.InfoS("loopfs test driver serving", "driver", *name, "node", *nodeID, "socket", socket, "root", d.root,
		"targetRoot", d.targetRoot, "operationLog", d.opLogPath, "onlineExt4", hasCapability(capSysResource))
	if err := server.Serve(listener); err != nil {
		klog.Fatalf("serving: %v", err)
	}
}

// newServer is a gRPC server with the driver's three services, logging each call's outcome.
func newServer(d *driver) *grpc.Server {
	server := grpc.NewServer(grpc.UnaryInterceptor(logCall))
	csi.RegisterIdentityServer(server, &identityServer{d: d})
	csi.RegisterControllerServer(server, &controllerServer{d: d})
	csi.RegisterNodeServer(server, &nodeServer{d: d})
	return server
}

func logCall(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err != nil {
		klog.ErrorS(err, "call failed", "method", info.FullMethod, "code", status.Code(err), "request", req)
	} else {
		klog.V(3).InfoS("call", "method", info.FullMethod, "request", req, "response", resp)
	}
	return resp, err
}

func init() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s [flags] (a CSI driver for tests: see its package comment)\n", os.Args[0])
		flag.PrintDefaults()
	}
}
