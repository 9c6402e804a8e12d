import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { repoRoot } from "../../automation/toolchain";
import {
  INSTANCE_NAMES_PROCESS,
  NOT_IN_BRIDGE,
  imageClosure,
  importClosure,
  productionPackages,
} from "./bridge-image";

describe("bridge image: what goes in", () => {
  it("follows the entry point's relative imports and names the packages they require", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "closure-"));
    const write = (f: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
      fs.writeFileSync(path.join(root, f), text);
    };
    write(
      "programs/bridge/main.ts",
      'import { a } from "../../lib/a";\nimport * as k8s from "@kubernetes/client-node";\n',
    );
    write(
      "lib/a.ts",
      'import "./b";\nimport type { X } from "yaml/types";\nimport * as fs from "node:fs";\n',
    );
    write("lib/b/index.ts", "export {};\n");
    write("lib/unused.ts", 'import "zod";\n');
    try {
      assert.deepEqual(importClosure(root, "programs/bridge/main.ts"), {
        modules: ["lib/a.ts", "lib/b/index.ts", "programs/bridge/main.ts"],
        packages: ["@kubernetes/client-node", "yaml"],
      });
      write("lib/a.ts", 'import "./missing";\n');
      assert.throws(
        () => importClosure(root, "programs/bridge/main.ts"),
        /lib\/a.ts imports .\/missing, which is not/,
      );
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("the bridge's closure has every implementation's bridge program and no environment side, so no cloud SDK", () => {
    const { modules, packages } = importClosure(repoRoot, "programs/bridge/main.ts", NOT_IN_BRIDGE);
    for (const impl of ["proxy", "wireguard", "aws-vpc-peering", "openstack"])
      assert.ok(modules.includes(`network/${impl}/bridge-program.ts`), impl);
    assert.deepEqual(
      modules.filter((m) => NOT_IN_BRIDGE.test(m)),
      [],
    );
    assert.deepEqual(
      packages.filter((p) => ["@pulumi/aws", "@pulumi/openstack"].includes(p)),
      [],
    );
    // Without the omission the environment sides, and so the cloud SDKs, would come in.
    assert.ok(importClosure(repoRoot, "programs/bridge/main.ts").packages.includes("@pulumi/aws"));
  });

  it("holds the instance-names watcher and its closure beside the bridge, where its pods run it", () => {
    const image = imageClosure(repoRoot);
    const watcher = importClosure(repoRoot, "programs/instance-names/main.ts", NOT_IN_BRIDGE);
    assert.equal(INSTANCE_NAMES_PROCESS, "/app/programs/instance-names/main.js");
    assert.ok(image.modules.includes("programs/instance-names/main.ts"));
    assert.ok(image.modules.includes("programs/bridge/main.ts"));
    assert.deepEqual(
      watcher.modules.filter((m) => !image.modules.includes(m)),
      [],
    );
    assert.deepEqual(
      watcher.packages.filter((p) => !image.packages.includes(p)),
      [],
    );
    // A small process beside CoreDNS in every app cluster: no Pulumi loaded, nor the bridge's controller.
    assert.deepEqual(watcher.packages, ["@kubernetes/client-node", "commander"]);
    assert.ok(!watcher.modules.includes("programs/bridge/controller.ts"));
  });

  it("takes a package's dependencies as npm placed them (nested first), required peers, no optional peers", () => {
    const lock = {
      packages: {
        "": {},
        "node_modules/a": {
          dependencies: { b: "^1" },
          peerDependencies: { c: "*", ts: "*" },
          peerDependenciesMeta: { ts: { optional: true } },
        },
        "node_modules/a/node_modules/b": { optionalDependencies: { "other-os": "*" } },
        "node_modules/b": {},
        "node_modules/c": { dependencies: { b: "^2" } },
        "node_modules/ts": {},
        "node_modules/dev-only": {},
      },
    };
    assert.deepEqual(productionPackages(lock, ["a"]), [
      "node_modules/a",
      "node_modules/a/node_modules/b",
      "node_modules/b",
      "node_modules/c",
    ]);
    assert.throws(
      () => productionPackages(lock, ["nope"]),
      /the bridge requires nope, which package-lock.json does not list/,
    );
  });
});
