import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { mockPulumi, settle } from "../../test/helpers/mocks";
import { runKlutchProgram } from "./program";

/**
 * kube-apiserver's answer to a Service whose node port is outside its range, as a v1.37.2 API
 * server gave it in test/e2e/node-port-probe.test.ts (a 422 Status), replayed on loopback.
 */
function refusingApiServer(): Promise<{ server: http.Server; url: string; posts: string[] }> {
  const posts: string[] = [];
  const server = http.createServer((req, res) => {
    if (req.method === "POST") posts.push(req.url ?? "");
    res.writeHead(422, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message:
          'Service "klutch-node-port-probe-x7k2p" is invalid: spec.ports[0].nodePort: Invalid value: 5000: provided port is not in the valid range. The range of valid ports is 30000-32767',
        reason: "Invalid",
        code: 422,
      }),
    );
  });
  return listening(server).then((url) => ({ server, url, posts }));
}

/** The server listening on a loopback port of its own; its URL. */
function listening(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`),
    ),
  );
}

const kubeconfigFor = (url: string) =>
  [
    "apiVersion: v1",
    "kind: Config",
    "clusters: [{name: ops, cluster: {server: " + url + ", insecure-skip-tls-verify: true}}]",
    "users: [{name: ops, user: {token: not-a-secret}}]",
    "contexts: [{name: ops, context: {cluster: ops, user: ops}}]",
    "current-context: ops",
  ].join("\n");

/** A kubeconfig for `url` in a directory of its own (removed by the test). */
function kubeconfigFile(url: string): { dir: string; kubeconfig: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-program-"));
  const kubeconfig = path.join(dir, "ops.yaml");
  fs.writeFileSync(kubeconfig, kubeconfigFor(url));
  return { dir, kubeconfig };
}

/** An existing control plane and app cluster (the server at `kubeconfig`), the app's connector as given. */
const existingStack = (kubeconfig: string, networkConnector: Record<string, unknown>) => ({
  environment: "ops",
  controlPlane: { name: "ops-cp", infrastructure: "existing", kubeconfig: { path: kubeconfig } },
  appClusters: [
    { name: "app-1", infrastructure: "existing", kubeconfig: { path: kubeconfig }, networkConnector },
  ],
});

/** With a NodePort proxy on ports 5000-5100, outside every API server's default node ports. */
const nodePortStack = (kubeconfig: string) =>
  existingStack(kubeconfig, {
    implementation: "proxy",
    serviceType: "NodePort",
    portRange: { from: 5000, to: 5100 },
    allowedSources: ["10.20.0.0/16"],
  });

describe("the stack program asks the data-service cluster's API server on up and preview", () => {
  it("a NodePort range an existing control plane refuses stops the run before anything is registered, naming the field, the value and the cluster's range", async () => {
    const api = await refusingApiServer();
    const { dir, kubeconfig } = kubeconfigFile(api.url);
    try {
      const run = mockPulumi(nodePortStack(kubeconfig));
      await assert.rejects(runKlutchProgram(), (err: Error) => {
        assert.match(
          err.message,
          /klutch:appClusters\[0\]\.networkConnector\.portRange: 5000-5100 is outside the node ports of the data-service cluster ops-cp: its API server takes 30000-32767/,
        );
        assert.match(err.message, /nothing was created or changed/);
        return true;
      });
      assert.equal(run.resources.length, 0);
      // The node-port probe, and the dry-run of the proxy's Service its admission is asked with
      // (this server's 422 is no admission verdict, so that one only warns); asked side by side.
      assert.deepEqual([...api.posts].sort(), [
        "/api/v1/namespaces/default/services",
        "/api/v1/namespaces/klutch-network/services?dryRun=All",
      ]);
    } finally {
      api.server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a preview asks what it can without writing: admission's dry-run, not the node-port create", async () => {
    const api = await refusingApiServer();
    const { dir, kubeconfig } = kubeconfigFile(api.url);
    try {
      const run = mockPulumi(nodePortStack(kubeconfig), "test", { preview: true });
      // The range is not asked, so not refused: the preview goes on and plans the environment.
      await runKlutchProgram();
      await settle();
      assert.ok(run.resources.length > 0);
      assert.deepEqual(api.posts, ["/api/v1/namespaces/klutch-network/services?dryRun=All"]);
    } finally {
      api.server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a Crossplane someone else installed on an existing control plane stops the run before anything is registered, naming it", async () => {
    // kube-apiserver's DeploymentList for `app=crossplane`, as test/e2e/existing-control-plane.test.ts reads one.
    const gets: string[] = [];
    const server = http.createServer((req, res) => {
      gets.push(req.url ?? "");
      // No namespace of the environment's is there yet, nor any API it defines
      // (existing-namespaces.ts and existing-apis.ts read each).
      if (req.url?.startsWith("/api/v1/namespaces/") || req.url?.startsWith("/apis/apiextensions")) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            reason: "NotFound",
            code: 404,
          }),
        );
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          kind: "DeploymentList",
          apiVersion: "apps/v1",
          metadata: { resourceVersion: "42" },
          items: [
            {
              metadata: { name: "crossplane", namespace: "crossplane-system", labels: { app: "crossplane" } },
              spec: {
                template: {
                  spec: {
                    containers: [
                      { name: "crossplane", image: "xpkg.crossplane.io/crossplane/crossplane:v2.3.0" },
                    ],
                  },
                },
              },
            },
          ],
        }),
      );
    });
    const url = await listening(server);
    const { dir, kubeconfig } = kubeconfigFile(url);
    try {
      const run = mockPulumi(existingStack(kubeconfig, { implementation: "noop" }));
      await assert.rejects(runKlutchProgram(), (err: Error) => {
        assert.match(
          err.message,
          /klutch:controlPlane\.kubeconfig: the control plane ops-cp already runs Crossplane 2\.3\.0 as Deployment crossplane-system\/crossplane, which environment ops did not install/,
        );
        assert.match(err.message, /nothing was created or changed/);
        return true;
      });
      assert.equal(run.resources.length, 0);
      assert.deepEqual(gets.sort(), [
        "/api/v1/namespaces/bind",
        "/api/v1/namespaces/cluster-app-1",
        "/api/v1/namespaces/crossplane-system",
        "/api/v1/namespaces/klutch-bind",
        "/api/v1/namespaces/klutch-network",
        "/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions/xtcpconnections.klutch.anynines.com",
        ...[
          "apiservicebindings.klutch.anynines.com",
          "apiserviceexportrequests.klutch.anynines.com",
          "apiserviceexports.klutch.anynines.com",
          "apiserviceexporttemplates.example-backend.klutch.anynines.com",
          "apiservicenamespaces.klutch.anynines.com",
          "clusterbindings.klutch.anynines.com",
          "networkpaths.klutch.anynines.com",
        ].map((crd) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`),
        "/apis/apps/v1/deployments?labelSelector=app%3Dcrossplane",
      ]);
    } finally {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
