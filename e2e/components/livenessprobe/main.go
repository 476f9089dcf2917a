// Command livenessprobe is a STAND-IN for the CSI livenessprobe image
// (registry.k8s.io/sig-storage/livenessprobe), which the Go module proxy does not serve. The
// csi-hostpath e2e driver runs it beside the driver, whose container's liveness probe asks it for
// /healthz: it answers 200 when the driver's Probe says ready and 500 otherwise, as the real
// sidecar does. Only the flags the e2e manifests pass, and the timeout.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"
)

func main() {
	klog.InitFlags(nil)
	csiAddress := flag.String("csi-address", "/run/csi/socket", "the CSI driver's socket: a path or unix:///path")
	healthPort := flag.Int("health-port", 9808, "TCP port of /healthz")
	timeout := flag.Duration("probe-timeout", time.Second, "timeout of the driver's Probe")
	flag.Parse()

	conn, err := grpc.NewClient("unix://"+strings.TrimPrefix(*csiAddress, "unix://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		klog.Fatalf("connecting to %s: %v", *csiAddress, err)
	}
	identity := csi.NewIdentityClient(conn)
	http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), *timeout)
		defer cancel()
		res, err := identity.Probe(ctx, &csi.ProbeRequest{})
		switch {
		case err != nil:
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "probe failed: %v", err)
		case res.GetReady() != nil && !res.GetReady().GetValue():
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "driver not ready")
		default:
			fmt.Fprint(w, "ok")
		}
	})
	address := fmt.Sprintf(":%d", *healthPort)
	klog.Infof("serving /healthz on %s for the driver on %s", address, *csiAddress)
	klog.Fatal(http.ListenAndServe(address, nil))
}
