"""A whole Klutch environment on clusters that already exist, handed over by their kubeconfigs: a
control plane, on which the platform team installed Crossplane, with Klutch's packages, the
klutch-bind backend with Dex and the connector API, and an app cluster bound to it, whose data
services it reaches through the TCP proxy. On `preview` and `up` the component first asks the
control plane's API server what only it knows (whether its Crossplane is one Klutch can use, the
proxy's ports): docs/existing-clusters.md.
Config: controlPlaneKubeconfig and appClusterKubeconfig, the kubeconfig files of the operator's
clusters (relative to this folder, or absolute)."""

import pulumi
import pulumi_klutch as klutch

config = pulumi.Config()

environment = klutch.Environment(
    "klutch",
    environment="ops",
    control_plane=klutch.ControlPlaneArgs(
        name="ops-cp",
        infrastructure="existing",
        kubeconfig=klutch.KubeconfigSourceArgs(path=config.require("controlPlaneKubeconfig")),
    ),
    app_clusters=[
        klutch.AppClusterArgs(
            name="shop",
            infrastructure="existing",
            kubeconfig=klutch.KubeconfigSourceArgs(path=config.require("appClusterKubeconfig")),
            network_connector=klutch.NetworkConnectorArgs(
                implementation="proxy",
                # Only the addresses the shop cluster's pods connect from may open connections
                # to its proxy.
                allowed_sources=["10.50.0.0/16"],
            ),
        )
    ],
    bind=klutch.BindSettingsArgs(external_address="https://bind.ops.example.com"),
    # The platform team installed Crossplane on the control plane first, as Klutch's guide has
    # it: the environment installs Klutch's packages onto it, no Crossplane of its own.
    crossplane=klutch.CrossplaneSettingsArgs(use_installed=True),
)

pulumi.export("bindExternalAddress", environment.bind_external_address)
pulumi.export("exportedApis", environment.exported_apis)
