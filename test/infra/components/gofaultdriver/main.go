// Command gofaultdriver is a CSI controller on grpc-go that fails on purpose, so tests see how the
// resizer's client reports what a grpc-go driver does at the edges of the protocol:
//
//   - --expand=hang: ControllerExpandVolume waits until its context ends. grpc-go's server resets
//     the stream with RST_STREAM CANCEL when the grpc-timeout the client sent runs out.
//   - --expand=oversized: ControllerExpandVolume answers with a message larger than gRPC's 4 MiB
//     default receive limit (unknown-field padding, which grpc-go sends as it is).
//   - --expand=unavailable: ControllerExpandVolume fails with the driver's own Unavailable
//     ("driver busy"), which grpc-go's server sends as a Trailers-Only response.
//   - --compressor=NAME: every response is flagged compressed under grpc-encoding NAME, whether
//     or not the client accepts it (the legacy grpc.RPCCompressor does not ask); "identity" sets
//     the compressed flag under the identity encoding.
//
// Otherwise it is a plain driver: Probe, GetPluginInfo, the capabilities, CreateVolume, and
// ControllerExpandVolume that grows to the requested size. It lives beside mockdriver so it builds
// from the same go.mod (grpc and the CSI spec are already required there).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const receiveLimitBytes = 4 * 1024 * 1024

type driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	name   string
	expand string
}

func (d *driver) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: d.name, VendorVersion: "test"}, nil
}

func (d *driver) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

func (d *driver) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{
		{Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: csi.PluginCapability_Service_CONTROLLER_SERVICE}}},
		{Type: &csi.PluginCapability_VolumeExpansion_{VolumeExpansion: &csi.PluginCapability_VolumeExpansion{Type: csi.PluginCapability_VolumeExpansion_ONLINE}}},
	}}, nil
}

func (d *driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	rpc := func(t csi.ControllerServiceCapability_RPC_Type) *csi.ControllerServiceCapability {
		return &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}}
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{
		rpc(csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME),
		rpc(csi.ControllerServiceCapability_RPC_EXPAND_VOLUME),
	}}, nil
}

// CreateVolume names the volume after the request, so the tests' fixtures can provision on it.
func (d *driver) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: req.GetName(), CapacityBytes: req.GetCapacityRange().GetRequiredBytes()}}, nil
}

func (d *driver) ControllerExpandVolume(ctx context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	res := &csi.ControllerExpandVolumeResponse{CapacityBytes: req.GetCapacityRange().GetRequiredBytes()}
	switch d.expand {
	case "hang":
		// Logged so a test knows the call reached the driver. The transport has reset the stream
		// by the time the context ends at the deadline; the status returned here is what a client
		// would get if it cancelled first.
		fmt.Printf("ControllerExpandVolume %s: waiting until the call's context ends\n", req.GetVolumeId())
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	case "oversized":
		res.ProtoReflect().SetUnknown(unknownBytesField(receiveLimitBytes))
	case "unavailable":
		return nil, status.Error(codes.Unavailable, "driver busy")
	}
	return res, nil
}

// unknownBytesField encodes field 1000 (length-delimited) holding n zero bytes, by hand: importing
// google.golang.org/protobuf directly would make the go command rewrite the shared go.mod.
func unknownBytesField(n int) []byte {
	out := appendVarint(nil, 1000<<3|2)
	out = appendVarint(out, uint64(n))
	return append(out, make([]byte, n)...)
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// flaggingCompressor copies the message unchanged but makes grpc-go flag it compressed under its name.
type flaggingCompressor struct{ name string }

func (c flaggingCompressor) Do(w io.Writer, p []byte) error { _, err := w.Write(p); return err }
func (c flaggingCompressor) Type() string                   { return c.name }

func main() {
	endpoint := flag.String("endpoint", "", "unix socket to serve on: an absolute path or unix:///path")
	name := flag.String("name", "gofault.csi.test", "driver name reported by GetPluginInfo")
	expand := flag.String("expand", "grow", "what ControllerExpandVolume does: grow, hang, oversized or unavailable")
	compressor := flag.String("compressor", "", "flag every response compressed under this grpc-encoding")
	flag.Parse()

	path := strings.TrimPrefix(*endpoint, "unix://")
	if !strings.HasPrefix(path, "/") {
		fmt.Fprintln(os.Stderr, "gofaultdriver: --endpoint must be an absolute path or unix:///path")
		os.Exit(2)
	}
	switch *expand {
	case "grow", "hang", "oversized", "unavailable":
	default:
		fmt.Fprintf(os.Stderr, "gofaultdriver: --expand=%q: use grow, hang, oversized or unavailable\n", *expand)
		os.Exit(2)
	}
	_ = os.Remove(path)

	listener, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gofaultdriver:", err)
		os.Exit(1)
	}
	var options []grpc.ServerOption
	if *compressor != "" {
		// The deprecated option on purpose: it is the one that compresses without asking the client.
		options = append(options, grpc.RPCCompressor(flaggingCompressor{name: *compressor}))
	}
	server := grpc.NewServer(options...)
	d := &driver{name: *name, expand: *expand}
	csi.RegisterIdentityServer(server, d)
	csi.RegisterControllerServer(server, d)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		server.Stop()
	}()
	fmt.Printf("gofaultdriver %s serving on %s (expand=%s compressor=%q)\n", *name, path, *expand, *compressor)
	if err := server.Serve(listener); err != nil {
		fmt.Fprintln(os.Stderr, "gofaultdriver:", err)
		os.Exit(1)
	}
}
