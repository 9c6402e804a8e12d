import { strict as assert } from "node:assert";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { corefileStubZonesProvider as provider, type CorefileStubZonesInputs } from "./corefile-stub-zones";
import { BEGIN_MARKER } from "../../lib/instance-names/corefile";
import { corefile } from "../../host/local-clusters/node/cluster-dns";
import { runSerialized } from "../../test/helpers/dynamic-provider";
import { loopbackKubeconfig } from "../../test/helpers/kubeconfig";

const ORIGINAL = corefile("cluster.local");
const PATH = "/api/v1/namespaces/kube-system/configmaps/coredns";
const TOKEN = "s3cret-token-of-the-app-cluster";

/**
 * A stand-in API server on loopback holding the one ConfigMap, with the API server's optimistic
 * concurrency: a PUT whose resourceVersion is not the current one is a 409 Conflict. With
 * `conflicts`, that many PUTs find that someone else (an operator adding `log`) wrote first.
 */
async function fakeCluster(text: string | undefined, conflicts = 0) {
  const state = { text, version: 7, conflicts, puts: 0, conflicted: 0 };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      const send = (code: number, object: unknown) => {
        res.writeHead(code, { "content-type": "application/json" });
        res.end(JSON.stringify(object));
      };
      const status = (code: number, reason: string) =>
        send(code, { kind: "Status", apiVersion: "v1", status: "Failure", reason, code });
      if (req.url?.split("?")[0] !== PATH || state.text === undefined) return status(404, "NotFound");
      const object = () => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "coredns", namespace: "kube-system", resourceVersion: String(state.version) },
        data: { Corefile: state.text },
      });
      if (req.method === "GET") return send(200, object());
      if (req.method !== "PUT") return status(405, "MethodNotAllowed");
      if (state.conflicts > 0) {
        state.conflicts--;
        state.text = state.text.replace("    errors\n", "    errors\n    log\n");
        state.version++;
      }
      const sent = JSON.parse(body);
      if (sent.metadata?.resourceVersion !== String(state.version)) {
        state.conflicted++;
        return status(409, "Conflict");
      }
      state.text = sent.data.Corefile;
      state.version++;
      state.puts++;
      send(200, object());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const kubeconfig = loopbackKubeconfig(port).replace("token: t\n", `token: ${TOKEN}\n`);
  assert.ok(kubeconfig.includes(TOKEN));
  return { state, kubeconfig, close: () => server.close() };
}

const inputs = (kubeconfig: string, zones: string[]): CorefileStubZonesInputs => ({
  kubeconfig,
  namespace: "kube-system",
  configMap: "coredns",
  key: "Corefile",
  zones,
  serverAddress: "10.96.0.53",
});

const ZONES = ["a9s-instances.svc.cluster.local", "service.dc1.consul"];

describe("CorefileStubZones dynamic provider", function () {
  this.timeout(30000);

  it("creates, updates in place and deletes, serialized and run in a plain node process", async () => {
    const api = await fakeCluster(ORIGINAL);
    try {
      const first = inputs(api.kubeconfig, ZONES);
      const second = inputs(api.kubeconfig, ["service.dc1.consul"]);
      const seen = (await runSerialized(
        provider,
        `async (p) => {
          const seen = [];
          const created = await p.create(${JSON.stringify(first)});
          seen.push(created.id, (await p.read(created.id, created.outs)).props.zones);
          const updated = await p.update(created.id, created.outs, ${JSON.stringify(second)});
          seen.push((await p.read(created.id, updated.outs)).props.zones);
          await p.delete(created.id, updated.outs);
          seen.push((await p.read(created.id, updated.outs)).props.zones);
          return seen;
        }`,
      )) as unknown[];
      assert.deepEqual(seen, ["kube-system/coredns/Corefile", ZONES, ["service.dc1.consul"], []]);
      assert.equal(api.state.text, ORIGINAL, "the Corefile byte for byte as it was");
      assert.equal(api.state.puts, 3);
    } finally {
      api.close();
    }
  });

  it("writes the section after the cluster's own blocks, and again from a new read after a 409", async () => {
    const api = await fakeCluster(ORIGINAL, 1);
    try {
      await provider.create(inputs(api.kubeconfig, ZONES));
      assert.equal(api.state.conflicted, 1);
      const theirs = ORIGINAL.replace("    errors\n", "    errors\n    log\n");
      assert.ok(
        api.state.text!.startsWith(`${theirs}\n${BEGIN_MARKER}\n${ZONES.join(" ")} {\n`),
        api.state.text,
      );
      await provider.delete("id", inputs(api.kubeconfig, ZONES));
      assert.equal(api.state.text, theirs, "the other writer's line kept, ours gone");
    } finally {
      api.close();
    }
  });

  it("refuses a zone another server block declares, writing nothing", async () => {
    const foreign = `${ORIGINAL}\nservice.dc1.consul {\n    forward . 10.0.0.2\n}\n`;
    const api = await fakeCluster(foreign);
    try {
      await assert.rejects(
        provider.create(inputs(api.kubeconfig, ZONES)),
        /^Error: ConfigMap kube-system\/coredns, key Corefile was left unchanged: zone "service\.dc1\.consul" is already declared by the Corefile's server block "service\.dc1\.consul" at line 21/,
      );
      assert.deepEqual([api.state.text, api.state.puts], [foreign, 0]);
    } finally {
      api.close();
    }
  });

  it("on delete, a missing ConfigMap or section is nothing to undo; on create, a missing ConfigMap is an error", async () => {
    const none = await fakeCluster(undefined);
    try {
      await provider.delete("id", inputs(none.kubeconfig, ZONES));
      await assert.rejects(
        provider.create(inputs(none.kubeconfig, ZONES)),
        /kube-system\/coredns, key Corefile was not found; set namespace/,
      );
    } finally {
      none.close();
    }
    const clean = await fakeCluster(ORIGINAL);
    try {
      await provider.delete("id", inputs(clean.kubeconfig, ZONES));
      assert.deepEqual([clean.state.text, clean.state.puts], [ORIGINAL, 0]);
    } finally {
      clean.close();
    }
  });

  it("never says the kubeconfig: not in failures, errors or a broken kubeconfig's message", async () => {
    const broken = `token: ${TOKEN}\n  - [unclosed`;
    for (const kubeconfig of [broken, `users:\n\t- token: ${TOKEN}\n`])
      await assert.rejects(provider.create(inputs(kubeconfig, ZONES)), (err: Error) => {
        assert.match(
          err.message,
          /^kubeconfig is not a readable kubeconfig with a current cluster \(its text is secret/,
        );
        assert.ok(!err.message.includes(TOKEN) && !String(err.stack).includes(TOKEN));
        return true;
      });
    const refused = await provider.check({} as CorefileStubZonesInputs, {
      ...inputs(broken, ["."]),
      kubeconfig: "",
    });
    assert.ok(!JSON.stringify(refused).includes(TOKEN));
    assert.deepEqual(
      refused.failures?.map((f) => f.property),
      ["kubeconfig", "zones"],
    );
  });

  it("checks and normalises the inputs; unknown preview values pass", async () => {
    const bad = await provider.check({} as CorefileStubZonesInputs, {
      ...inputs("k", ["x.org", "X.org."]),
      namespace: "Kube_System",
      serverAddress: "names.default.svc",
    });
    assert.deepEqual(
      bad.failures?.map((f) => `${f.property}: ${f.reason.split(";")[0]}`),
      [
        'namespace: namespace "Kube_System" is not a namespace name (DNS-1123 label)',
        'zones: zone "X.org." is named twice in zones',
        'serverAddress: serverAddress "names.default.svc" is not an IP address with an optional port (CoreDNS\'s forward plugin takes no host names)',
      ],
    );
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    // namespace, configMap and key left out: their defaults.
    const bare = { kubeconfig: "k", zones: ["Service.DC1.consul.", "a.org"], serverAddress: unknown };
    const good = await provider.check({} as CorefileStubZonesInputs, bare as CorefileStubZonesInputs);
    assert.deepEqual(good.inputs, {
      ...inputs("k", ["a.org", "service.dc1.consul"]),
      serverAddress: unknown,
    });
    // A preview of a Service not made yet: its ClusterIP is nothing at all, unjudged until create.
    const noAddress = { kubeconfig: bare.kubeconfig, zones: bare.zones };
    const previewed = await provider.check(
      {} as CorefileStubZonesInputs,
      noAddress as CorefileStubZonesInputs,
    );
    assert.equal(previewed.failures, undefined);
    // Protobuf's Struct has no undefined: the field is left out, not set to undefined.
    assert.ok(!("serverAddress" in previewed.inputs!), "serverAddress left out");
  });

  it("diffs zones (in any order), address, location and credentials as updates, never replacements", async () => {
    const olds = inputs("k", ZONES);
    const diff = (news: Partial<CorefileStubZonesInputs>) => provider.diff("id", olds, { ...olds, ...news });
    assert.equal((await diff({ zones: [...ZONES].reverse() })).changes, false);
    for (const news of [
      { zones: ["a.org"] },
      { serverAddress: "10.96.0.54" },
      { configMap: "dns" },
      { kubeconfig: "k2" },
    ]) {
      const result = await diff(news);
      assert.deepEqual([result.changes, result.replaces], [true, []], JSON.stringify(news));
    }
  });
});
