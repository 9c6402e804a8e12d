"""A network path for one data service: HAProxy on a cluster, one port for a PostgreSQL instance,
behind one Service. Config: kubeconfigPath, instanceHost, instancePort, and optionally namespace
(default "default") and skipAwait (a cluster without a kubelet)."""

import pulumi
from pulumi_klutch import network

config = pulumi.Config()

with open(config.require("kubeconfigPath"), encoding="utf-8") as f:
    # The kubeconfig's text: the SDK keeps it a secret.
    kubeconfig = f.read()

proxy = network.TcpProxy(
    "orders-db",
    kubeconfig=kubeconfig,
    namespace=config.get("namespace") or "default",
    service_type="ClusterIP",
    skip_await=config.get_bool("skipAwait") or False,
    replicas=1,
    port_range=network.PortRangeArgs(from_=30000, to=30099),
    connections=[
        network.TcpConnectionArgs(
            id="team-a/orders-db",
            instance_host=config.require("instanceHost"),
            port=config.require_int("instancePort"),
            enhancements=[{"InstanceType": "PostgreSQL"}],
        )
    ],
)

pulumi.export("serviceName", proxy.service_name)
pulumi.export("ports", proxy.assignments)
