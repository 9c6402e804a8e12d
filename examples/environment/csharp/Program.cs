// A whole Klutch environment on clusters that already exist, handed over by their kubeconfigs: a
// control plane, on which the platform team installed Crossplane, with Klutch's packages, the
// klutch-bind backend with Dex and the connector API, and an app cluster bound to it, whose data
// services it reaches through the TCP proxy. On `preview` and `up` the component first asks the
// control plane's API server what only it knows (whether its Crossplane is one Klutch can use, the
// proxy's ports): docs/existing-clusters.md.
// Config: controlPlaneKubeconfig and appClusterKubeconfig, the kubeconfig files of the operator's
// clusters (relative to this folder, or absolute).
using System.Collections.Generic;
using Pulumi;
using Anynines.Klutch;
using Anynines.Klutch.Inputs;

return await Deployment.RunAsync(() =>
{
    var config = new Config();
    var environment = new Environment("klutch", new EnvironmentArgs
    {
        Environment = "ops",
        ControlPlane = new ControlPlaneArgs
        {
            Name = "ops-cp",
            Infrastructure = "existing",
            Kubeconfig = new KubeconfigSourceArgs { Path = config.Require("controlPlaneKubeconfig") },
        },
        AppClusters =
        {
            new AppClusterArgs
            {
                Name = "shop",
                Infrastructure = "existing",
                Kubeconfig = new KubeconfigSourceArgs { Path = config.Require("appClusterKubeconfig") },
                NetworkConnector = new NetworkConnectorArgs
                {
                    Implementation = "proxy",
                    // Only the addresses the shop cluster's pods connect from may open connections to its proxy.
                    AllowedSources = { "10.50.0.0/16" },
                },
            },
        },
        Bind = new BindSettingsArgs { ExternalAddress = "https://bind.ops.example.com" },
        // The platform team installed Crossplane on the control plane first, as Klutch's guide has
        // it: the environment installs Klutch's packages onto it, no Crossplane of its own.
        Crossplane = new CrossplaneSettingsArgs { UseInstalled = true },
    });
    return new Dictionary<string, object?>
    {
        ["bindExternalAddress"] = environment.BindExternalAddress,
        ["exportedApis"] = environment.ExportedApis,
    };
});
