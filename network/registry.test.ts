import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { CONNECTOR_IMPLEMENTATIONS, appCluster } from "../lib/config/schema";
import { bridgeSettings } from "../lib/bridge/settings";
import { isManaged } from "../lib/bridge/model";
import { BRIDGE_PROGRAMS } from "./bridge-programs";
import { ENVIRONMENT_BUILDERS } from "./environments";
import { IMPLEMENTATIONS, networkConnector, realisationOf } from "./registry";

/**
 * Every consumer of the registry knows every implementation, so a half-wired implementation
 * (one that validates but that the bridge or the environment ignores) cannot land again.
 */
describe("network implementation registry", () => {
  const names = IMPLEMENTATIONS.map((i) => i.name);

  it("has unique names, each with a folder of its own holding its config", () => {
    assert.equal(new Set(names).size, names.length);
    for (const i of IMPLEMENTATIONS) {
      const folder = i.name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
      assert.ok(fs.existsSync(path.join(__dirname, folder, "config.ts")), `network/${folder}/config.ts`);
    }
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
    assert.deepEqual(Object.keys(BRIDGE_PROGRAMS).sort(), [...names].sort());
    for (const i of IMPLEMENTATIONS) {
      assert.equal(realisationOf(i.name), i.realisation);
      assert.equal(BRIDGE_PROGRAMS[i.name] === undefined, i.realisation === "ignored", i.name);
      assert.equal(
        isManaged({
          spec: { implementation: i.name, connection: "c", instanceHost: "h", port: 1 },
        }),
        i.realisation !== "ignored",
      );
    }
  });

  it("the environment names what it builds for every implementation", () => {
    assert.deepEqual(Object.keys(ENVIRONMENT_BUILDERS).sort(), [...names].sort());
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

  it("the README documents every implementation", () => {
    const readme = fs.readFileSync(path.join(__dirname, "..", "README.md"), "utf8");
    for (const name of names) assert.match(readme, new RegExp(`\\b${name}\\b`), name);
  });
});
