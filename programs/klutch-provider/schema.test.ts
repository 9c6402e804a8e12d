import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { KLUTCH_PACKAGE } from "./catalog";
import { CONSTRUCTORS } from "./constructors";
import { KlutchProvider } from "./provider";
import {
  API_REFERENCE_DIR,
  PACKAGE_INDEX_FILE,
  SCHEMA_FILE,
  apiReferencePages,
  packageIndexText,
  schemaText,
} from "./schema-file";
import { type PackageSpec, inputProblems, packageSchema } from "../../providers/kit/schema-model";
import { mockPulumi } from "../../test/helpers/mocks";

describe("klutch provider schema", () => {
  it("programs/klutch-provider/schema.json is what programs/klutch-provider/catalog.ts generates (run `npm run provider:schema` after changing a component's args)", () => {
    assert.equal(fs.readFileSync(SCHEMA_FILE, "utf8"), schemaText());
  });

  it("docs/api/ is the API reference generated from the schema (run `npm run provider:schema`)", () => {
    const pages = apiReferencePages();
    assert.deepEqual(fs.readdirSync(API_REFERENCE_DIR).sort(), [...pages.keys()].sort());
    for (const [name, text] of pages)
      assert.equal(fs.readFileSync(`${API_REFERENCE_DIR}/${name}`, "utf8"), text, `docs/api/${name} differs`);
    // Every component is on its module's page, with its inputs.
    const network = pages.get("network.md")!;
    assert.match(network, /^## TcpProxy$/m);
    assert.match(network, /^\| `kubeconfig` \| string \| required, secret \|/m);
  });

  it("docs/_index.md holds the examples' files as they are (run `npm run provider:schema` after changing one)", () => {
    assert.equal(fs.readFileSync(PACKAGE_INDEX_FILE, "utf8"), packageIndexText());
    assert.match(
      packageIndexText(),
      /^### Go\n\n`examples\/network-path\/go\/main\.go`:\n\n```go\n\/\/ A network path/m,
    );
    assert.match(
      packageIndexText(),
      /^### Python\n\n`examples\/environment\/python\/__main__\.py`:\n\n```python\n"""A whole Klutch environment/m,
    );
  });

  it("the drift check notices a changed argument", () => {
    const tcp = KLUTCH_PACKAGE.components.find((c) => c.token === "klutch:network:TcpProxy")!;
    const changed: PackageSpec = {
      ...KLUTCH_PACKAGE,
      components: KLUTCH_PACKAGE.components.map((c) =>
        c === tcp ? { ...c, inputs: { ...c.inputs, extra: { type: "string", description: "new" } } } : c,
      ),
    };
    assert.notEqual(JSON.stringify(packageSchema(changed)), JSON.stringify(packageSchema(KLUTCH_PACKAGE)));
  });

  it("every component of the catalog is constructed, and nothing else", () => {
    assert.deepEqual(Object.keys(CONSTRUCTORS).sort(), KLUTCH_PACKAGE.components.map((c) => c.token).sort());
  });

  it("secrets are marked in the schema and required inputs exist", () => {
    const schema = packageSchema(KLUTCH_PACKAGE) as {
      resources: Record<
        string,
        { inputProperties: Record<string, { secret?: boolean }>; requiredInputs: string[] }
      >;
    };
    assert.equal(schema.resources["klutch:network:TcpProxy"]!.inputProperties.kubeconfig!.secret, true);
    for (const [token, r] of Object.entries(schema.resources))
      for (const key of r.requiredInputs)
        assert.ok(r.inputProperties[key], `${token}: required ${key} is no input`);
  });
});

describe("klutch provider input checks", () => {
  const tcp = KLUTCH_PACKAGE.components.find((c) => c.token === "klutch:network:TcpProxy")!;
  const check = (values: Record<string, unknown>) =>
    inputProblems(KLUTCH_PACKAGE, tcp.inputs, tcp.requiredInputs, values);
  const good = {
    kubeconfig: "k",
    namespace: "ns",
    connections: [{ id: "a/b", instanceHost: "h", port: 5432 }],
  };

  it("accepts good input", () => assert.deepEqual(check(good), []));

  it("names the field, the bad value and what is allowed", () => {
    assert.deepEqual(check({ ...good, serviceType: "Ingress" }), [
      'serviceType is "Ingress", expected one of ClusterIP, NodePort, LoadBalancer',
    ]);
    assert.deepEqual(check({ ...good, connections: [{ id: "a/b", instanceHost: "h", port: "5432" }] }), [
      'connections[0].port is "5432", expected a whole number',
    ]);
    assert.deepEqual(check({ ...good, connections: [{ id: "a/b", port: 1 }] }), [
      "connections[0].instanceHost is required (DNS name or IP address of the data-service instance.)",
    ]);
    assert.deepEqual(check({ ...good, namespaces: "x" }).length, 1);
  });

  it("a missing required input is reported unless it is only unknown yet", () => {
    const rest = { kubeconfig: good.kubeconfig, connections: good.connections };
    assert.equal(check(rest).length, 1);
    assert.deepEqual(
      inputProblems(KLUTCH_PACKAGE, tcp.inputs, tcp.requiredInputs, rest, "", new Set(["namespace"])),
      [],
    );
  });
});

describe("klutch provider construct", () => {
  it("refuses bad input with one message naming every bad field, before registering anything", async () => {
    const run = mockPulumi({});
    const provider = new KlutchProvider();
    await assert.rejects(
      provider.construct(
        "proxy",
        "klutch:network:TcpProxy",
        {
          kubeconfig: pulumi.secret("apiVersion: v1"),
          namespace: "default",
          serviceType: "Ingress",
          connections: [{ id: "a/b", instanceHost: "h", port: 0.5 }],
        },
        {},
      ),
      (err: Error) => {
        assert.match(err.message, /^TcpProxy proxy: invalid arguments:/);
        assert.match(
          err.message,
          /serviceType is "Ingress", expected one of ClusterIP, NodePort, LoadBalancer/,
        );
        assert.match(err.message, /connections\[0\]\.port is 0\.5, expected a whole number/);
        return true;
      },
    );
    assert.deepEqual(run.resources, []);
  });

  it("passes the component's own checks' message through (a port range outside 1-65535)", async () => {
    mockPulumi({});
    await assert.rejects(
      new KlutchProvider().construct(
        "local",
        "klutch:network:LocalTcpProxy",
        {
          stateDir: "/tmp/x",
          portRange: { from: 70000, to: 70010 },
          connections: [{ id: "a/b", instanceHost: "h", port: 5432 }],
        },
        {},
      ),
      /LocalTcpProxy local: invalid arguments:\n {2}- portRange/,
    );
  });

  it("runs the config model's own validation for an exported API", async () => {
    mockPulumi({});
    await assert.rejects(
      new KlutchProvider().construct(
        "api",
        "klutch:bind:ExportedApi",
        {
          kubeconfig: pulumi.secret("k"),
          namespace: "ns",
          group: "anynines.com",
          version: "1",
          resource: "Pgs",
        },
        {},
      ),
      (err: Error) => {
        assert.match(err.message, /^ExportedApi api: invalid arguments:/);
        assert.match(err.message, /version: must be a Kubernetes API version such as v1/);
        assert.match(err.message, /resource: must be a plural lowercase resource name/);
        return true;
      },
    );
  });
});
