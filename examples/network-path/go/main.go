// A network path for one data service: HAProxy on a cluster, one port for a PostgreSQL instance,
// behind one Service. Config: kubeconfigPath, instanceHost, instancePort, and optionally
// namespace (default "default") and skipAwait (a cluster without a kubelet).
package main

import (
	"os"

	"github.com/anynines/klutch-pulumi/sdk/go/klutch/network"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")
		kubeconfig, err := os.ReadFile(cfg.Require("kubeconfigPath"))
		if err != nil {
			return err
		}
		namespace := cfg.Get("namespace")
		if namespace == "" {
			namespace = "default"
		}
		serviceType, skipAwait := "ClusterIP", cfg.GetBool("skipAwait")
		proxy, err := network.NewTcpProxy(ctx, "orders-db", &network.TcpProxyArgs{
			// The kubeconfig's text: the SDK keeps it a secret.
			Kubeconfig:  pulumi.String(string(kubeconfig)),
			Namespace:   pulumi.String(namespace),
			ServiceType: &serviceType,
			SkipAwait:   &skipAwait,
			Replicas:    pulumi.Int(1),
			PortRange:   network.PortRangeArgs{From: pulumi.Int(30000), To: pulumi.Int(30099)},
			Connections: network.TcpConnectionArray{network.TcpConnectionArgs{
				Id:           pulumi.String("team-a/orders-db"),
				InstanceHost: pulumi.String(cfg.Require("instanceHost")),
				Port:         pulumi.Int(cfg.RequireInt("instancePort")),
				Enhancements: pulumi.StringMapArray{pulumi.StringMap{"InstanceType": pulumi.String("PostgreSQL")}},
			}},
		})
		if err != nil {
			return err
		}
		ctx.Export("serviceName", proxy.ServiceName)
		ctx.Export("ports", proxy.Assignments)
		return nil
	})
}
