"""A Python program on the klutch provider's Python SDK (sdk/python, package pulumi_klutch),
run by test/e2e/provider-sdks.test.ts through Pulumi's Python Automation API: the inline program
runs in this process, which hosts its language runtime itself (no pulumi-language-python), and the
engine (the toolchain's `pulumi` on PATH) starts the klutch plugin named in the work dir's
Pulumi.yaml for every component.

    python consumer.py up <params.json>       create or update, then print {"outputs", "changes"}
    python consumer.py preview <params.json>  preview, then print {"changes"}
    python consumer.py destroy <params.json>  destroy and remove the stack

With an example's folder after <params.json> (examples/network-path/python), the program is that
example's __main__.py, run as the CLI would run it, with params' "config" as the stack's config.

The backend, passphrase and PULUMI_HOME come from the environment. Secret outputs are printed as
{"secret": true} without their value.
"""

import json
import os
import runpy
import sys

import pulumi
from pulumi import automation as auto

from pulumi_klutch import bind, cluster, network


def program(p: dict):
    def run() -> None:
        control_plane = cluster.LocalCluster(
            "controlPlane", cluster_name=p["clusterName"], kubeconfig_path=p["kubeconfigPath"]
        )
        # The kubeconfig as a plain string: the SDK makes it a secret (the schema marks it so).
        with open(p["kubeconfigPath"], encoding="utf-8") as f:
            kubeconfig = f.read()
        # One connection as the SDK's args class, once as its TypedDict.
        postgres = network.TcpConnectionArgs(
            id="team-a/pg-1",
            instance_host="127.0.0.1",
            port=p["postgresPort"],
            enhancements=[{"InstanceType": "PostgreSQL"}],
        )
        proxy = network.TcpProxy(
            "proxy",
            kubeconfig=kubeconfig,
            namespace=p["namespace"],
            service_type="ClusterIP",
            # The local cluster runs no kubelet: apply without waiting for pods.
            skip_await=True,
            replicas=1,
            port_range=network.PortRangeArgs(from_=30000, to=30099),
            connections=[postgres],
        )
        local_proxy = network.LocalTcpProxy(
            "localProxy",
            state_dir=p["stateDir"],
            port_range={"from_": p["portRange"]["from"], "to": p["portRange"]["to"]},
            connections=[
                {
                    "id": "team-a/pg-1",
                    "instance_host": "127.0.0.1",
                    "port": p["postgresPort"],
                    "enhancements": [{"InstanceType": "PostgreSQL"}],
                }
            ],
        )
        api = bind.ExportedApi(
            "postgresApi",
            kubeconfig=control_plane.kubeconfig,
            namespace=p["namespace"],
            group="anynines.com",
            version="v1",
            resource="postgresqlinstances",
            kind="PostgresqlInstance",
            permission_claims=[bind.PermissionClaimArgs(group="", resource="secrets", owner="Provider")],
            labels={"klutch.io/sdk": "python"},
        )
        pulumi.export("clusterName", control_plane.cluster_name)
        pulumi.export("kubeconfig", control_plane.kubeconfig)
        pulumi.export("proxyService", proxy.service_name)
        pulumi.export("proxyAssignments", proxy.assignments)
        # Read through the SDK's output type (outputs.ConsumerEndpoint attributes), which is what
        # this checks. Exported as it is, pulumi 3.259.0 wrote its Python keys (host_for_consumer);
        # 3.272.0, the toolchain's Python SDK, writes wire keys (runtime/stack.py massage_complex).
        pulumi.export(
            "endpoints",
            local_proxy.endpoints.apply(
                lambda endpoints: {
                    key: {"hostForConsumer": e.host_for_consumer, "port": e.port}
                    for key, e in endpoints.items()
                }
            ),
        )
        pulumi.export("unplaced", local_proxy.unplaced)
        pulumi.export("templateName", api.template_name)

    return run


def main() -> int:
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("up", "preview", "destroy"):
        print("usage: consumer.py up|preview|destroy <params.json> [<example dir>]", file=sys.stderr)
        return 2
    command = sys.argv[1]
    with open(sys.argv[2], encoding="utf-8") as f:
        p = json.load(f)
    example = sys.argv[3] if len(sys.argv) == 4 else None
    run = (
        (lambda: runpy.run_path(os.path.join(example, "__main__.py"), run_name="__main__"))
        if example
        else program(p)
    )
    # The project (its name and runtime) is the work dir's Pulumi.yaml.
    stack = auto.create_or_select_stack(
        stack_name=p["stackName"],
        project_name="",
        program=run,
        opts=auto.LocalWorkspaceOptions(work_dir=p["workDir"]),
    )
    if example:
        stack.set_all_config(
            {
                key: auto.ConfigValue(value=value if isinstance(value, str) else json.dumps(value))
                for key, value in p["config"].items()
            }
        )
    progress = lambda line: print(line, file=sys.stderr)  # noqa: E731
    if command == "destroy":
        stack.destroy(on_output=progress)
        stack.workspace.remove_stack(p["stackName"])
        return 0
    if command == "preview":
        res = stack.preview(on_output=progress)
        print(json.dumps({"changes": res.change_summary}))
        return 0
    # The diff display shows every resource's inputs: the test reads it for secrets in plain text.
    res = stack.up(diff=True, on_output=progress)
    outputs = {
        name: {"secret": True} if o.secret else {"secret": False, "value": o.value}
        for name, o in res.outputs.items()
    }
    changes = res.summary.resource_changes or {}
    print(json.dumps({"outputs": outputs, "changes": changes}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
