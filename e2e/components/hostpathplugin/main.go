// Command hostpathplugin is a STAND-IN for the CSI hostpath driver image
// (registry.k8s.io/sig-storage/hostpathplugin), which the Go module proxy does not serve. It
// does only the two jobs Kubernetes' "CSI Mock" e2e specs give that image:
//
//   - with -proxy-endpoint=tcp://:PORT (csi-mock-proxy.yaml) it is the port proxy the e2e
//     harness expects (test/e2e/storage/drivers/proxy): each connection a sidecar or kubelet
//     opens on -endpoint is spliced to one connection accepted on the TCP port, where the e2e
//     process, through a pod port-forward, serves the mock CSI driver itself. The TCP port
//     listens for as long as the process runs, so the harness's connections are accepted by the
//     kernel in advance and wait for a client, as the harness's comments expect;
//   - without it (csi-mock-driver.yaml: --drivername, --nodeid, --endpoint, --statedir, and the
//     e2e's --enable-attach, --enable-topology, --attach-limit, --node-expand-required) it
//     serves Kubernetes' e2e mock CSI service (test/e2e/storage/drivers/csi-test/mock/service)
//     on -endpoint and logs every call as one "gRPCCall: {json}" line in the format the e2e's
//     embedded mode logs, because the specs read the driver container's log for those lines.
//     It also takes the flags of the csi-hostpath e2e driver (--maxvolumespernode,
//     --accepted-mutable-parameter-names, ...), so that deployment runs the mock too.
//
// It is not the hostpath driver: no volume data, no mounts. The mock service reports its driver
// name as its node ID, as it does in the e2e's embedded mode; -nodeid and -statedir are accepted
// and not used.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	mockdriver "k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/driver"
	"k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service"
)

func main() {
	klog.InitFlags(nil)
	endpoint := flag.String("endpoint", "unix:///csi/csi.sock", "CSI endpoint: a unix socket path or unix:///path")
	proxyEndpoint := flag.String("proxy-endpoint", "", "proxy mode: tcp://[host]:port to splice -endpoint connections to")
	driverName := flag.String("drivername", "hostpath.csi.k8s.io", "driver name reported by GetPluginInfo")
	flag.String("nodeid", "", "accepted for compatibility; the mock service uses the driver name as node ID")
	flag.String("statedir", "", "accepted for compatibility; the mock service keeps its state in memory")
	enableAttach := flag.Bool("enable-attach", false, "advertise PUBLISH_UNPUBLISH_VOLUME (the volume needs ControllerPublish)")
	enableTopology := flag.Bool("enable-topology", false, "advertise VOLUME_ACCESSIBILITY_CONSTRAINTS")
	attachLimit := flag.Int64("attach-limit", 0, "maximum volumes per node reported by NodeGetInfo (0: none)")
	nodeExpandRequired := flag.Bool("node-expand-required", false, "ControllerExpandVolume asks for node expansion")
	// The flags Kubernetes' csi-hostpath e2e driver (csi-hostpath-plugin.yaml and its patches) passes.
	maxVolumesPerNode := flag.Int64("maxvolumespernode", 0, "the same as --attach-limit")
	flag.Bool("check-volume-lifecycle", false, "accepted for compatibility")
	flag.Bool("enable-controller-modify-volume", false, "accepted for compatibility: the mock service always serves ControllerModifyVolume")
	acceptedMutable := flag.String("accepted-mutable-parameter-names", "", "comma-separated mutable parameters CreateVolume and ControllerModifyVolume accept; any other is InvalidArgument (empty: all)")
	flag.Parse()
	if *attachLimit == 0 {
		*attachLimit = *maxVolumesPerNode
	}

	socket := strings.TrimPrefix(*endpoint, "unix://")
	if err := os.Remove(socket); err != nil && !os.IsNotExist(err) {
		klog.Fatalf("removing stale socket %s: %v", socket, err)
	}
	unixListener, err := net.Listen("unix", socket)
	if err != nil {
		klog.Fatalf("listening on %s: %v", socket, err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	if *proxyEndpoint != "" {
		address := strings.TrimPrefix(*proxyEndpoint, "tcp://")
		tcpListener, err := net.Listen("tcp", address)
		if err != nil {
			klog.Fatalf("listening on %s: %v", address, err)
		}
		klog.Infof("proxy: connections to %s are spliced to connections accepted on %s", socket, address)
		go func() { <-ctx.Done(); unixListener.Close(); tcpListener.Close() }()
		runProxy(unixListener, tcpListener)
		return
	}

	mock := service.New(service.Config{
		DriverName:            *driverName,
		DisableAttach:         !*enableAttach,
		AttachLimit:           *attachLimit,
		NodeExpansionRequired: *nodeExpandRequired,
		EnableTopology:        *enableTopology,
	})
	driver := mockdriver.NewCSIDriver(&mockdriver.CSIDriverServers{Controller: mock, Identity: mock, Node: mock})
	interceptor := logCalls
	if *acceptedMutable != "" {
		interceptor = chain(logCalls, onlyMutable(strings.Split(*acceptedMutable, ",")))
	}
	if err := driver.Start(unixListener, interceptor); err != nil {
		klog.Fatalf("starting the mock CSI service: %v", err)
	}
	klog.Infof("mock CSI driver %s serving on %s", *driverName, socket)
	<-ctx.Done()
	driver.Stop()
}

// logCalls logs each call once it has its result, as "gRPCCall: " followed by the JSON the e2e's
// embedded mock driver logs (Method, Request, Response, Error and FullError, the gRPC status as
// a google.rpc.Status), so the specs' log parser reads this container the same way.
func logCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	resp, err = handler(ctx, req)
	entry := struct {
		Method    string
		Request   any
		Response  any
		Error     string
		FullError any
	}{Method: info.FullMethod, Request: req, Response: resp}
	if err != nil {
		entry.Error = err.Error()
		entry.FullError = grpcstatus.Convert(err).Proto()
	}
	line, marshalErr := json.Marshal(entry)
	if marshalErr != nil {
		klog.Errorf("encoding the call %s for the log: %v", info.FullMethod, marshalErr)
	} else {
		klog.Infof("gRPCCall: %s", line)
	}
	return resp, err
}

// onlyMutable refuses mutable parameters outside the accepted names with InvalidArgument, in
// CreateVolume and ControllerModifyVolume, as the hostpath driver does with the same flag: the
// e2e's volume-modify specs count on a VolumeAttributesClass with another parameter failing.
func onlyMutable(accepted []string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		var params map[string]string
		switch r := req.(type) {
		case *csi.CreateVolumeRequest:
			params = r.GetMutableParameters()
		case *csi.ControllerModifyVolumeRequest:
			params = r.GetMutableParameters()
		}
		for name := range params {
			if !slices.Contains(accepted, name) {
				return nil, grpcstatus.Errorf(codes.InvalidArgument, "mutable parameter %q is not accepted (accepted: %s)", name, strings.Join(accepted, ","))
			}
		}
		return handler(ctx, req)
	}
}

// chain runs outer around inner: outer sees inner's result (so the log shows refusals too).
func chain(outer, inner grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return outer(ctx, req, info, func(ctx context.Context, req any) (any, error) {
			return inner(ctx, req, info, handler)
		})
	}
}

// runProxy splices every connection accepted on clients to the next connection accepted on
// upstream, until clients is closed. One upstream connection serves one client connection.
func runProxy(clients, upstream net.Listener) {
	var next sync.Mutex // upstream connections are handed out one client at a time
	for {
		client, err := clients.Accept()
		if err != nil {
			klog.Infof("proxy: stopped accepting: %v", err)
			return
		}
		go func() {
			next.Lock()
			server, err := upstream.Accept()
			next.Unlock()
			if err != nil {
				klog.Errorf("proxy: no upstream connection for a client: %v", err)
				client.Close()
				return
			}
			klog.V(5).Infof("proxy: client %v spliced to %v", client.RemoteAddr(), server.RemoteAddr())
			splice(client, server)
		}()
	}
}

// splice copies both ways and closes both connections once either direction ends.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	copyOneWay := func(to, from net.Conn) {
		_, _ = io.Copy(to, from)
		done <- struct{}{}
	}
	go copyOneWay(a, b)
	go copyOneWay(b, a)
	<-done
	a.Close()
	b.Close()
	<-done
}

func init() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s [flags] (a stand-in for the CSI hostpath driver image, see its package comment)\n", os.Args[0])
		flag.PrintDefaults()
	}
}
