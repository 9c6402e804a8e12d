import { strict as assert } from "node:assert";
import { bridgeArgs } from "../bridge/deployment";
import { previewArgsFromBridge } from "./deployed-bridge";

const PREVIEW = new Map<string, boolean>([
  ["--target", true],
  ["--data-plane-kubeconfig", true],
  ["--service-type", true],
  ["--proxy-image", true],
  ["--port-range", true],
  ["--public-endpoint", false],
  ["--backend", true],
  ["--slot-size", true],
  ["--settings", true],
]);

describe("network preview flags from the deployed bridge", () => {
  it("keeps the shared flags, maps the pod's paths to this machine's and drops the bridge's own", () => {
    const pod = bridgeArgs({
      opsPort: 9464,
      state: { kind: "hostPath", path: "/srv/klutch/control-plane/bridge-state" },
      flags: [
        "--service-type",
        "NodePort",
        "--public-endpoint",
        "--proxy-image",
        "klutch.local/haproxy:2.8@sha256:ab",
        "--port-range=31000-31999",
      ],
    });
    const argv = previewArgsFromBridge(pod, PREVIEW, {
      stateDir: "/srv/klutch/control-plane/bridge-state",
      dataPlaneKubeconfig: "/tmp/x/data-plane.kubeconfig",
    });
    assert.deepEqual(argv, [
      "--target",
      "kubernetes",
      "--data-plane-kubeconfig",
      "/tmp/x/data-plane.kubeconfig",
      "--bridge-state-dir",
      "/srv/klutch/control-plane/bridge-state",
      "--service-type",
      "NodePort",
      "--public-endpoint",
      "--proxy-image",
      "klutch.local/haproxy:2.8@sha256:ab",
      "--port-range",
      "31000-31999",
    ]);
    for (const own of ["--leader-elect", "--ops-port", "--ops-address"]) assert.ok(!argv.includes(own), own);
  });

  it("passes a shared backend on and leaves the pod's state dir out when it is not on this machine", () => {
    const pod = bridgeArgs({
      opsPort: 9464,
      state: { kind: "backend", url: "s3://bucket/bridge" },
      flags: [],
    });
    const argv = previewArgsFromBridge(pod, PREVIEW, {});
    assert.deepEqual(argv, ["--target", "kubernetes", "--backend", "s3://bucket/bridge"]);
  });
});
