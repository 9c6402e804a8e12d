import { strict as assert } from "node:assert";
import { bridgeArgs, bridgeDeploymentProblem } from "../../lib/bridge/deployment";

describe("bridge Deployment: command line and checks", () => {
  it("runs with leader election, the kubernetes target, the mounted data-plane kubeconfig and probes on every address", () => {
    assert.deepEqual(
      bridgeArgs({
        opsPort: 9464,
        state: { kind: "hostPath", path: "/var/lib/x" },
        flags: ["--service-type", "NodePort"],
      }),
      [
        "--leader-elect",
        "--target",
        "kubernetes",
        "--data-plane-kubeconfig",
        "/etc/klutch-bridge/data-plane-kubeconfig",
        "--state-dir",
        "/var/lib/klutch-bridge",
        "--ops-address",
        "0.0.0.0",
        "--ops-port",
        "9464",
        "--service-type",
        "NodePort",
      ],
    );
    const shared = bridgeArgs({ opsPort: 1, state: { kind: "backend", url: "s3://b/p" }, flags: [] });
    assert.deepEqual(shared.slice(7, 9), ["--backend", "s3://b/p"]);
  });

  it("names the field, the value and the fix for bad arguments", () => {
    const ok = { replicas: 2, opsPort: 9464, state: { kind: "hostPath" as const, path: "/srv/b" } };
    assert.equal(bridgeDeploymentProblem(ok), undefined);
    assert.match(
      bridgeDeploymentProblem({ ...ok, replicas: 0 }) ?? "",
      /replicas 0 must be a whole number >= 1/,
    );
    assert.match(
      bridgeDeploymentProblem({ ...ok, opsPort: 70000 }) ?? "",
      /opsPort 70000 must be a TCP port/,
    );
    assert.match(
      bridgeDeploymentProblem({ ...ok, state: { kind: "hostPath", path: "rel" } }) ?? "",
      /state.path "rel" must be an absolute directory/,
    );
    assert.match(
      bridgeDeploymentProblem({ ...ok, state: { kind: "backend", url: "file:///tmp/s" } }) ?? "",
      /state.url "file:\/\/\/tmp\/s" must be a backend every replica reaches .* use state.kind hostPath/,
    );
    assert.match(
      bridgeDeploymentProblem({ ...ok, flags: ["--backend=s3://x"] }) ?? "",
      /bridgeFlags may not set --backend: the component sets it/,
    );
  });
});
