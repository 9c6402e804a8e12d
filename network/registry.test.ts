import { spawnSync } from "node:child_process";
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { NODE_TYPESCRIPT_ARGS } from "../host/automation/toolchain";
import { appCluster } from "../components/config/schema";
import { KLUTCH_PACKAGE } from "../programs/klutch-provider/catalog";
import { CONSTRUCTORS } from "../programs/klutch-provider/constructors";
import { keysOf } from "../test/helpers/schema-keys";
import { bridgeSettings } from "./plugins/bridge-settings";
import { bridgeProgramOf } from "./plugins/bridge-programs";
import {
  IMPLEMENTATIONS,
  IMPLEMENTATION_NAMES as CONNECTOR_IMPLEMENTATIONS,
  isManaged,
  networkConnector,
  realisationOf,
} from "./registry";

/**
 * Every consumer of the registry knows every implementation, so a half-wired implementation
 * (one that validates but that the bridge or the environment ignores) cannot land again.
 */
describe("network implementation registry", () => {
  const names = IMPLEMENTATIONS.map((i) => i.name);

  it("has unique names, each with a folder of its own holding its spec and config", () => {
    assert.equal(new Set(names).size, names.length);
    for (const i of IMPLEMENTATIONS) {
      const folder = i.name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
      for (const file of ["spec.ts", "config.ts"])
        assert.ok(
          fs.existsSync(path.join(__dirname, folder, "model", file)),
          `network/${folder}/model/${file}`,
        );
    }
  });

  it("lets the default implementation be chosen by its name alone (components/config/schema.ts's default)", () => {
    assert.ok(networkConnector.safeParse({ implementation: IMPLEMENTATIONS[0].name }).success);
  });

  it("the config schema accepts each implementation with its defaults, and nothing else", () => {
    assert.deepEqual([...CONNECTOR_IMPLEMENTATIONS], names);
    for (const name of names) {
      const parsed = networkConnector.safeParse({ implementation: name });
      assert.ok(parsed.success, `${name}: ${parsed.success ? "" : parsed.error.message}`);
      assert.equal(
        appCluster.safeParse({
          name: "a",
          infrastructure: "local",
          networkConnector: { implementation: name },
        }).success,
        true,
      );
    }
    assert.equal(networkConnector.safeParse({ implementation: "istio" }).success, false);
  });

  it("the bridge has a program for every implementation it realises, and none for ignored ones", () => {
    for (const i of IMPLEMENTATIONS) {
      assert.equal(realisationOf(i.name), i.realisation);
      const program = bridgeProgramOf(`ns/${i.name}`);
      assert.equal(program === undefined, i.realisation === "ignored", i.name);
      if (program) assert.equal(typeof program, "function", i.name);
      assert.equal(
        isManaged({
          spec: { implementation: i.name, connection: "c", instanceHost: "h", port: 1 },
        }),
        i.realisation !== "ignored",
      );
    }
  });

  it("each environment side a spec names loads and builds (NOOP builds nothing)", () => {
    for (const i of IMPLEMENTATIONS) {
      const part = i.pulumi.environment?.();
      assert.equal(part === undefined, i.name === "noop", i.name);
      if (part) assert.equal(typeof part.build, "function", i.name);
    }
  });

  it("each provider surface a spec names is served whole: every component in the catalog, each with its constructor", () => {
    const served = new Set(KLUTCH_PACKAGE.components.map((c) => c.token));
    const withSurface: string[] = [];
    for (const i of IMPLEMENTATIONS) {
      const surface = i.pulumi.provider?.();
      if (!surface) continue;
      withSurface.push(i.name);
      for (const c of surface.components) {
        assert.ok(served.has(c.token), `${i.name}: ${c.token} is not in programs/klutch-provider/catalog.ts`);
        assert.equal(CONSTRUCTORS[c.token], surface.constructors[c.token], `${i.name}: ${c.token}`);
      }
      for (const token of Object.keys(surface.types)) assert.ok(KLUTCH_PACKAGE.types[token], token);
    }
    assert.deepEqual(withSurface, ["proxy", "wireguard", "awsVpcPeering", "openstack"]);
  });

  it("loading the registry and the config schema loads no Pulumi module: the specs' Pulumi sides load when asked", () => {
    const script = [
      'require("./network/registry");',
      'require("./components/config/schema");',
      "const loaded = Object.keys(require.cache).filter((f) => /node_modules\\/@pulumi\\//.test(f));",
      "process.stdout.write(JSON.stringify(loaded));",
    ].join("\n");
    const root = path.join(__dirname, "..");
    const r = spawnSync(process.execPath, [...NODE_TYPESCRIPT_ARGS, "-e", script], {
      cwd: root,
      encoding: "utf8",
    });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), []);
    // The same check can fail: a spec's loader, once called, loads its Pulumi side.
    const called = spawnSync(
      process.execPath,
      [
        ...NODE_TYPESCRIPT_ARGS,
        "-e",
        script.replace(
          'require("./components/config/schema");',
          'require("./network/registry").IMPLEMENTATIONS[0].pulumi.bridge();',
        ),
      ],
      { cwd: root, encoding: "utf8" },
    );
    assert.equal(called.status, 0, called.stderr);
    assert.notDeepEqual(JSON.parse(called.stdout), []);
  });

  it("the bridge settings carry every app cluster's implementation", () => {
    const settings = bridgeSettings({
      bind: { namespacePrefix: "cluster" } as never,
      appClusters: names.map((name) =>
        appCluster.parse({
          name: `a-${name.toLowerCase()}`,
          infrastructure: "local",
          networkConnector: { implementation: name },
        }),
      ),
    });
    assert.deepEqual(
      Object.values(settings.consumers).map((c) => c.implementation),
      names,
    );
  });

  it("declares its connector settings to the provider field for field, as its config schema has them", () => {
    const connector = KLUTCH_PACKAGE.types["klutch:index:NetworkConnector"];
    assert.ok(connector, "the provider has a NetworkConnector type");
    for (const i of IMPLEMENTATIONS) {
      const configKeys = keysOf(i.schema).filter((k) => k !== "implementation");
      const declared = Object.keys(i.pulumi.provider?.().connectorFields ?? {});
      assert.deepEqual(
        [...declared].sort(),
        [...configKeys].sort(),
        `${i.name}: provider/surface.ts connectorFields against model/config.ts`,
      );
      for (const key of configKeys) {
        const prop: { description: string } | undefined = connector.properties[key];
        assert.ok(prop, `${i.name}: NetworkConnector.${key}`);
        assert.match(
          prop.description,
          new RegExp(`(^|\\. )([\\w]+, )*${i.name}(, [\\w]+)*: `),
          `${key} names ${i.name}`,
        );
      }
    }
  });

  it("the configuration doc and Pulumi.yaml list every implementation, in the registry's order", () => {
    const doc = fs.readFileSync(path.join(__dirname, "..", "docs", "configuration.md"), "utf8");
    const appClusters = doc.split("\n").find((l) => l.startsWith("| `klutch:appClusters`")) ?? "";
    const listed = /`networkConnector` \(([^)]*)\)/.exec(appClusters)?.[1] ?? "";
    assert.deepEqual(
      [...listed.matchAll(/`(\w+)`/g)].map((m) => m[1]),
      names,
      `docs/configuration.md's klutch:appClusters row: ${listed}`,
    );
    const project = fs.readFileSync(path.join(__dirname, "..", "Pulumi.yaml"), "utf8");
    const inProject = /networkConnector: \{implementation: ([\w|]+)/.exec(project)?.[1] ?? "";
    assert.deepEqual(inProject.split("|"), names, "Pulumi.yaml's klutch:appClusters description");
  });
});
