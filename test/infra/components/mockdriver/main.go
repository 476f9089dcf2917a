// Command mockdriver serves Kubernetes' own e2e CSI mock driver
// (k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service) on a unix socket.
//
// It is the real CSI driver of the integration tests: the CSI hostpath driver is not served by
// the Go module proxy this project builds from, and this is the driver Kubernetes' own e2e suite
// runs for its resize tests. Volumes live in memory; they must be created with CreateVolume.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service"
)

func main() {
	endpoint := flag.String("endpoint", "", "unix socket to serve on: an absolute path or unix:///path")
	name := flag.String("name", "mock.csi.k8s.io", "driver name reported by GetPluginInfo")
	nodeExpansionRequired := flag.Bool("node-expansion-required", false, "ControllerExpandVolume asks for node expansion")
	disableControllerExpansion := flag.Bool("disable-controller-expansion", false, "do not advertise controller EXPAND_VOLUME")
	disableOnlineExpansion := flag.Bool("disable-online-expansion", false, "advertise OFFLINE expansion; expanding a published volume fails")
	flag.Parse()

	path := strings.TrimPrefix(*endpoint, "unix://")
	if !strings.HasPrefix(path, "/") {
		fmt.Fprintln(os.Stderr, "mockdriver: --endpoint must be an absolute path or unix:///path")
		os.Exit(2)
	}
	_ = os.Remove(path)

	driver := service.New(service.Config{
		DriverName:                 *name,
		DisableAttach:              true,
		NodeExpansionRequired:      *nodeExpansionRequired,
		DisableControllerExpansion: *disableControllerExpansion,
		DisableOnlineExpansion:     *disableOnlineExpansion,
	})

	listener, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mockdriver:", err)
		os.Exit(1)
	}
	server := grpc.NewServer()
	csi.RegisterIdentityServer(server, driver)
	csi.RegisterControllerServer(server, driver)
	csi.RegisterNodeServer(server, driver)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		server.Stop()
	}()
	fmt.Printf("mockdriver %s serving on %s\n", *name, path)
	if err := server.Serve(listener); err != nil {
		fmt.Fprintln(os.Stderr, "mockdriver:", err)
		os.Exit(1)
	}
}
