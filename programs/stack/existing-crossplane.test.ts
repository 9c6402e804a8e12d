import { strict as assert } from "node:assert";
import * as http from "node:http";
import * as k8s from "@kubernetes/client-node";
import { loopbackKubeconfig } from "../../test/helpers/kubeconfig";
import { installedCrossplaneAnswers } from "./existing-crossplane";
import { crossplane } from "../../lib/config/schema";

/**
 * A loopback API server: the operator's Crossplane 2.3.0 core for the Deployment list, and for
 * the package kinds what kube-apiserver answers for a CRD registered but not served yet (a 503
 * Status), so the package read fails while the cores can be judged.
 */
function apiServer(): Promise<{ server: http.Server; kc: k8s.KubeConfig }> {
  const core = {
    metadata: { name: "crossplane", namespace: "crossplane-system", labels: { app: "crossplane" } },
    spec: {
      template: {
        spec: {
          containers: [{ name: "crossplane", image: "xpkg.crossplane.io/crossplane/crossplane:v2.3.0" }],
        },
      },
    },
  };
  const server = http.createServer((req, res) => {
    const deployments = req.url?.startsWith("/apis/apps/v1/deployments") === true;
    res.writeHead(deployments ? 200 : 503, { "content-type": "application/json" });
    res.end(
      JSON.stringify(
        deployments
          ? { kind: "DeploymentList", apiVersion: "apps/v1", metadata: {}, items: [core] }
          : {
              kind: "Status",
              apiVersion: "v1",
              status: "Failure",
              message: "the server is currently unable to handle the request",
              reason: "ServiceUnavailable",
              code: 503,
            },
      ),
    );
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const kc = new k8s.KubeConfig();
      kc.loadFromString(loopbackKubeconfig((server.address() as { port: number }).port));
      resolve({ server, kc });
    }),
  );
}

describe("the installed Crossplane, asked of the control plane", () => {
  it("a package read that fails keeps what the cores said, and says what it could not ask", async () => {
    const { server, kc } = await apiServer();
    try {
      const answers = await installedCrossplaneAnswers(kc, {
        core: { environment: "ops", controlPlane: "ops-cp", version: "2.4.0", versionIsDefault: true },
        packages: crossplane.parse({}),
        owner: { environment: "ops", controlPlane: "ops-cp" },
      });
      assert.deepEqual(
        answers.issues.map((i) => i.path),
        ["klutch:crossplane.version"],
      );
      assert.match(answers.issues[0]!.message, /runs Crossplane 2\.3\.0/);
      assert.equal(answers.notes.length, 1);
      assert.match(
        answers.notes[0]!,
        /^could not ask the control plane ops-cp which Crossplane packages it has already \(.*\); going on$/,
      );
    } finally {
      server.close();
    }
  });
});
