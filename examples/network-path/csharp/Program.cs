// A network path for one data service: HAProxy on a cluster, one port for a PostgreSQL instance,
// behind one Service. Config: kubeconfigPath, instanceHost, instancePort, and optionally
// namespace (default "default") and skipAwait (a cluster without a kubelet).
using System.Collections.Generic;
using System.Collections.Immutable;
using System.IO;
using Pulumi;
using Anynines.Klutch.Network;
using Anynines.Klutch.Network.Inputs;

return await Deployment.RunAsync(() =>
{
    var config = new Config();
    var proxy = new TcpProxy("orders-db", new TcpProxyArgs
    {
        // The kubeconfig's text: the SDK keeps it a secret.
        Kubeconfig = File.ReadAllText(config.Require("kubeconfigPath")),
        Namespace = config.Get("namespace") ?? "default",
        ServiceType = "ClusterIP",
        SkipAwait = config.GetBoolean("skipAwait") ?? false,
        Replicas = 1,
        PortRange = new PortRangeArgs { From = 30000, To = 30099 },
        Connections =
        {
            new TcpConnectionArgs
            {
                Id = "team-a/orders-db",
                InstanceHost = config.Require("instanceHost"),
                Port = config.RequireInt32("instancePort"),
                Enhancements = { ImmutableDictionary.CreateRange(new Dictionary<string, string> { ["InstanceType"] = "PostgreSQL" }) },
            },
        },
    });
    return new Dictionary<string, object?>
    {
        ["serviceName"] = proxy.ServiceName,
        ["ports"] = proxy.Assignments,
    };
});
