// A network path for one data service: HAProxy on a cluster, one port for a PostgreSQL instance,
// behind one Service. Config: kubeconfigPath, instanceHost, instancePort, and optionally
// namespace (default "default") and skipAwait (a cluster without a kubelet).
import * as fs from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import * as klutch from "@klutch/pulumi";

const config = new pulumi.Config();

const proxy = new klutch.network.TcpProxy("orders-db", {
  // The kubeconfig's text: the SDK keeps it a secret.
  kubeconfig: fs.readFileSync(config.require("kubeconfigPath"), "utf8"),
  namespace: config.get("namespace") ?? "default",
  serviceType: "ClusterIP",
  skipAwait: config.getBoolean("skipAwait") ?? false,
  replicas: 1,
  portRange: { from: 30000, to: 30099 },
  connections: [
    {
      id: "team-a/orders-db",
      instanceHost: config.require("instanceHost"),
      port: config.requireNumber("instancePort"),
      enhancements: [{ InstanceType: "PostgreSQL" }],
    },
  ],
});

export const serviceName = proxy.serviceName;
export const ports = proxy.assignments;
