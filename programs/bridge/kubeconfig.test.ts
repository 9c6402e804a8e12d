import { strict as assert } from "node:assert";
import { controlPlaneKubeconfig } from "./kubeconfig";

describe("bridge: where the control plane is", () => {
  const pod = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };

  it("--kubeconfig first, then KUBECONFIG, then in a pod the in-cluster config", () => {
    assert.equal(controlPlaneKubeconfig("/a", { KUBECONFIG: "/b", ...pod }), "/a");
    assert.equal(controlPlaneKubeconfig(undefined, { KUBECONFIG: "/b", ...pod }), "/b");
    assert.equal(controlPlaneKubeconfig(undefined, pod), undefined);
  });

  it("outside a pod without either, one error saying what to pass", () => {
    assert.throws(() => controlPlaneKubeconfig(undefined, {}), /pass --kubeconfig or set KUBECONFIG/);
    assert.throws(
      () => controlPlaneKubeconfig(undefined, { KUBECONFIG: "/a:/b" }),
      /KUBECONFIG "\/a:\/b" lists several files: pass one with --kubeconfig/,
    );
  });
});
