// Command node-driver-registrar is a STAND-IN for the CSI node-driver-registrar image
// (registry.k8s.io/sig-storage/csi-node-driver-registrar), which the Go module proxy does not
// serve. It does what kubelet's plugin watcher needs from that sidecar and nothing more:
//
//  1. ask the CSI driver on --csi-address for its name (GetPluginInfo), retrying until it answers;
//  2. serve kubelet's plugin registration API (k8s.io/kubelet pluginregistration/v1) on
//     <--plugin-registration-path>/<driver>-reg.sock: GetInfo names the driver and the socket
//     kubelet should use for it (--kubelet-registration-path), NotifyRegistrationStatus is logged,
//     and a refused registration ends the process with an error, as the real sidecar does, so the
//     pod restarts and registers again.
//
// With --http-endpoint (Kubernetes 1.37's manifests pass it for the container's liveness probe) it
// serves /healthz as the real sidecar does: 200 while the registration socket exists, 500 once it
// is gone or kubelet refused the registration. No mode flags; the flags the e2e manifests pass are
// accepted.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

type registrar struct {
	registration.UnimplementedRegistrationServer
	driverName  string
	kubeletPath string
	failed      chan error
	refused     atomic.Bool
}

func (r *registrar) GetInfo(ctx context.Context, req *registration.InfoRequest) (*registration.PluginInfo, error) {
	klog.Infof("kubelet asked for the plugin's info: %s at %s", r.driverName, r.kubeletPath)
	return &registration.PluginInfo{
		Type:              registration.CSIPlugin,
		Name:              r.driverName,
		Endpoint:          r.kubeletPath,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (r *registrar) NotifyRegistrationStatus(ctx context.Context, status *registration.RegistrationStatus) (*registration.RegistrationStatusResponse, error) {
	klog.Infof("registration status: registered=%t error=%q", status.PluginRegistered, status.Error)
	if !status.PluginRegistered {
		r.refused.Store(true)
		r.failed <- fmt.Errorf("kubelet refused the registration of %s: %s", r.driverName, status.Error)
	}
	return &registration.RegistrationStatusResponse{}, nil
}

func main() {
	klog.InitFlags(nil)
	csiAddress := flag.String("csi-address", "/run/csi/socket", "the CSI driver's socket: a path or unix:///path")
	kubeletPath := flag.String("kubelet-registration-path", "", "the driver's socket as kubelet sees it on the node (required)")
	pluginDir := flag.String("plugin-registration-path", "/registration", "kubelet's plugin registration directory, as mounted in this container")
	timeout := flag.Duration("timeout", time.Second, "timeout of each call to the CSI driver")
	httpEndpoint := flag.String("http-endpoint", "", "host:port of /healthz (off when empty)")
	flag.Parse()
	if *kubeletPath == "" {
		klog.Fatal("--kubelet-registration-path is required")
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	name, err := driverName(ctx, *csiAddress, *timeout)
	if err != nil {
		klog.Fatalf("asking the CSI driver for its name: %v", err)
	}
	klog.Infof("CSI driver name: %q", name)

	socket := filepath.Join(*pluginDir, name+"-reg.sock")
	if err := os.Remove(socket); err != nil && !os.IsNotExist(err) {
		klog.Fatalf("removing stale socket %s: %v", socket, err)
	}
	listener, err := net.Listen("unix", socket)
	if err != nil {
		klog.Fatalf("listening on %s: %v", socket, err)
	}
	r := &registrar{driverName: name, kubeletPath: *kubeletPath, failed: make(chan error, 1)}
	server := grpc.NewServer()
	registration.RegisterRegistrationServer(server, r)
	go func() {
		if err := server.Serve(listener); err != nil {
			klog.Errorf("registration server stopped: %v", err)
		}
	}()
	klog.Infof("registration server listening on %s", socket)
	if *httpEndpoint != "" {
		go serveHealth(*httpEndpoint, socket, r)
	}

	select {
	case <-ctx.Done():
		server.Stop()
		_ = os.Remove(socket)
	case err := <-r.failed:
		server.Stop()
		_ = os.Remove(socket)
		klog.Fatal(err)
	}
}

// driverName calls GetPluginInfo until the driver answers: the driver container may start after
// this one, and in the e2e's proxy mode the driver is reached through a port-forward that comes
// up later still.
func driverName(ctx context.Context, address string, timeout time.Duration) (string, error) {
	target := "unix://" + strings.TrimPrefix(address, "unix://")
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	identity := csi.NewIdentityClient(conn)
	for {
		call, cancel := context.WithTimeout(ctx, timeout)
		info, err := identity.GetPluginInfo(call, &csi.GetPluginInfoRequest{})
		cancel()
		if err == nil {
			if info.GetName() == "" {
				return "", fmt.Errorf("GetPluginInfo on %s returned an empty name", address)
			}
			return info.GetName(), nil
		}
		klog.Infof("GetPluginInfo on %s: %v (retrying)", address, err)
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// serveHealth answers /healthz: the registration socket must exist and kubelet must not have
// refused the registration.
func serveHealth(address, socket string, r *registrar) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if _, err := os.Stat(socket); err != nil {
			http.Error(w, fmt.Sprintf("registration socket: %v", err), http.StatusInternalServerError)
			return
		}
		if r.refused.Load() {
			http.Error(w, "kubelet refused the registration", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	klog.Infof("serving /healthz on %s", address)
	if err := http.ListenAndServe(address, mux); err != nil {
		klog.Fatalf("serving /healthz on %s: %v", address, err)
	}
}
