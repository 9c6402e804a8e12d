import { strict as assert } from "node:assert";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { exportRequestProvider, type ExportRequestInputs } from "./export-request";
import { runSerialized } from "../../test/helpers/dynamic-provider";
import { loopbackKubeconfig } from "../../test/helpers/kubeconfig";

/**
 * A stand-in API server on loopback that answers like the backend would: it records every
 * request; the export appears once the request exists, or the request fails, as set.
 */
async function fakeApiServer(answer: "succeeds" | "fails") {
  const seen: string[] = [];
  let requested = false;
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const url = req.url ?? "";
    if (req.method === "POST") {
      requested = true;
      return send(201, {});
    }
    if (req.method === "DELETE") return send(url.includes("apiserviceexportrequests") ? 404 : 200, {});
    if (url.includes("/apiserviceexports/")) {
      return answer === "succeeds" && requested ? send(200, {}) : send(404, { kind: "Status", code: 404 });
    }
    if (url.includes("/apiserviceexportrequests/")) {
      return send(200, {
        status: { phase: "Failed", terminalMessage: "CustomResourceDefinition x not found" },
      });
    }
    send(404, {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const kubeconfig = loopbackKubeconfig(port);
  return { seen, kubeconfig, close: () => server.close() };
}

const inputs = (kubeconfig: string, awaitExport: boolean): ExportRequestInputs => ({
  kubeconfig,
  namespace: "cluster-app-1",
  name: "postgresqlinstances.anynines.com",
  spec: { resources: [{ group: "anynines.com", resource: "postgresqlinstances" }] },
  labels: {},
  awaitExport,
  timeoutSeconds: 10,
});

describe("ExportRequest dynamic provider (one-shot)", function () {
  this.timeout(30000);

  it("creates the request once and, with a backend, waits for its export (serialized, plain node)", async () => {
    const api = await fakeApiServer("succeeds");
    try {
      const out = (await runSerialized(
        exportRequestProvider,
        `async (p) => (await p.create(${JSON.stringify(inputs(api.kubeconfig, true))})).outs.exported`,
      )) as boolean;
      assert.equal(out, true);
      assert.equal(api.seen.filter((s) => s.startsWith("POST")).length, 1);
      assert.match(
        api.seen[0]!,
        /^POST \/apis\/klutch\.anynines\.com\/v1alpha1\/namespaces\/cluster-app-1\/apiserviceexportrequests/,
      );
    } finally {
      api.close();
    }
  });

  it("a Failed request is an error carrying the backend's terminal message", async () => {
    const api = await fakeApiServer("fails");
    try {
      const out = (await runSerialized(
        exportRequestProvider,
        `async (p) => p.create(${JSON.stringify(inputs(api.kubeconfig, true))})`,
      )) as { error?: string };
      assert.match(out.error ?? "", /failed: CustomResourceDefinition x not found/);
    } finally {
      api.close();
    }
  });

  it("without a backend it only creates; delete removes the request if still there and the export", async () => {
    const api = await fakeApiServer("fails");
    try {
      await runSerialized(
        exportRequestProvider,
        `async (p) => { await p.create(${JSON.stringify(inputs(api.kubeconfig, false))}); await p.delete("id", ${JSON.stringify(inputs(api.kubeconfig, false))}); return 0; }`,
      );
      assert.deepEqual(
        api.seen.map((s) => s.split(" ")[0] + " " + (s.includes("exportrequests") ? "request" : "export")),
        ["POST request", "DELETE request", "DELETE export"],
      );
    } finally {
      api.close();
    }
  });

  it("a changed spec replaces (the request is a message); new credentials only update", async () => {
    const olds = { ...inputs("a", true), exported: true };
    const spec = await exportRequestProvider.diff("id", olds, {
      ...inputs("a", true),
      spec: { resources: [] },
    });
    assert.deepEqual(spec.replaces, ["spec"]);
    const creds = await exportRequestProvider.diff("id", olds, inputs("b", true));
    assert.deepEqual([creds.changes, creds.replaces], [true, []]);
    const same = await exportRequestProvider.diff("id", olds, inputs("a", true));
    assert.equal(same.changes, false);
  });
});
