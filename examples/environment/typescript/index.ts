// A whole Klutch environment on clusters that already exist, handed over by their kubeconfigs: a
// control plane, on which the platform team installed Crossplane, with Klutch's packages, the
// klutch-bind backend with Dex and the connector API, and an app cluster bound to it, whose data
// services it reaches through the TCP proxy. On `preview` and `up` the component first asks the
// control plane's API server what only it knows (whether its Crossplane is one Klutch can use, the
// proxy's ports): docs/existing-clusters.md.
// Config: controlPlaneKubeconfig and appClusterKubeconfig, the kubeconfig files of the operator's
// clusters (relative to this folder, or absolute).
import * as pulumi from "@pulumi/pulumi";
import * as klutch from "@klutch/pulumi";

const config = new pulumi.Config();

const environment = new klutch.Environment("klutch", {
  environment: "ops",
  controlPlane: {
    name: "ops-cp",
    infrastructure: "existing",
    kubeconfig: { path: config.require("controlPlaneKubeconfig") },
  },
  appClusters: [
    {
      name: "shop",
      infrastructure: "existing",
      kubeconfig: { path: config.require("appClusterKubeconfig") },
      networkConnector: {
        implementation: "proxy",
        // Only the addresses the shop cluster's pods connect from may open connections to its proxy.
        allowedSources: ["10.50.0.0/16"],
      },
    },
  ],
  bind: { externalAddress: "https://bind.ops.example.com" },
  // The platform team installed Crossplane on the control plane first, as Klutch's guide has it:
  // the environment installs Klutch's packages onto it, no Crossplane of its own.
  crossplane: { useInstalled: true },
});

export const bindExternalAddress = environment.bindExternalAddress;
export const exportedApis = environment.exportedApis;
