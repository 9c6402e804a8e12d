// A whole Klutch environment on clusters that already exist, handed over by their kubeconfigs: a
// control plane, on which the platform team installed Crossplane, with Klutch's packages, the
// klutch-bind backend with Dex and the connector API, and an app cluster bound to it, whose data
// services it reaches through the TCP proxy. On `preview` and `up` the component first asks the
// control plane's API server what only it knows (whether its Crossplane is one Klutch can use, the
// proxy's ports): docs/existing-clusters.md.
// Config: controlPlaneKubeconfig and appClusterKubeconfig, the kubeconfig files of the operator's
// clusters (relative to this folder, or absolute).
package main

import (
	"github.com/anynines/klutch-pulumi/sdk/go/klutch"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")
		bindAddress := "https://bind.ops.example.com"
		environment, err := klutch.NewEnvironment(ctx, "klutch", &klutch.EnvironmentArgs{
			Environment: "ops",
			ControlPlane: klutch.ControlPlaneArgs{
				Name:           pulumi.String("ops-cp"),
				Infrastructure: pulumi.String("existing"),
				Kubeconfig:     klutch.KubeconfigSourceArgs{Path: pulumi.String(cfg.Require("controlPlaneKubeconfig"))},
			},
			AppClusters: []klutch.AppClusterInput{klutch.AppClusterArgs{
				Name:           pulumi.String("shop"),
				Infrastructure: pulumi.String("existing"),
				Kubeconfig:     klutch.KubeconfigSourceArgs{Path: pulumi.String(cfg.Require("appClusterKubeconfig"))},
				NetworkConnector: klutch.NetworkConnectorArgs{
					Implementation: pulumi.String("proxy"),
					// Only the addresses the shop cluster's pods connect from may open connections to its proxy.
					AllowedSources: pulumi.StringArray{pulumi.String("10.50.0.0/16")},
				},
			}},
			Bind: &klutch.BindSettingsArgs{ExternalAddress: pulumi.String(bindAddress)},
			// The platform team installed Crossplane on the control plane first, as Klutch's guide
			// has it: the environment installs Klutch's packages onto it, no Crossplane of its own.
			Crossplane: &klutch.CrossplaneSettingsArgs{UseInstalled: pulumi.Bool(true)},
		})
		if err != nil {
			return err
		}
		ctx.Export("bindExternalAddress", environment.BindExternalAddress)
		ctx.Export("exportedApis", environment.ExportedApis)
		return nil
	})
}
