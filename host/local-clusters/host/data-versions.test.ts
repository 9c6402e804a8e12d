import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { toolchainEnv } from "../../automation/toolchain";
import { LocalClusters } from "..";
import { pinnedVersion } from "../../toolchain/support-windows";
import { resolveBinaries } from "./binaries";
import {
  binaryVersions,
  readDataVersions,
  UNRECORDED_DATA_VERSIONS,
  upgradeRefusal,
  writeDataVersions,
} from "./data-versions";

const pinned = (env: string): string => pinnedVersion({ env });

describe("which releases wrote a local cluster's data (host/local-clusters/host/data-versions.ts)", () => {
  const at = (kubernetes: string, etcd: string) => ({ kubernetes, etcd });

  it("lets the data move by a patch or by one minor up", () => {
    assert.equal(upgradeRefusal("c", "/d", at("1.36.3", "3.6.5"), at("1.36.4", "3.6.5")), undefined);
    assert.equal(upgradeRefusal("c", "/d", at("1.36.3", "3.6.5"), at("1.37.2", "3.7.3")), undefined);
  });

  it("refuses a skipped minor with both versions, the rule and the fix in one message", () => {
    const message =
      upgradeRefusal("app-1", "/s/app-1", UNRECORDED_DATA_VERSIONS, at("1.37.2", "3.7.3")) ?? "";
    assert.match(
      message,
      /^local cluster "app-1": its data was written by Kubernetes 1\.33\.4 and etcd 3\.5\.21/,
    );
    assert.match(message, /this toolchain runs Kubernetes 1\.37\.2 and etcd 3\.7\.3/);
    assert.match(
      message,
      /Kubernetes 1\.33\.4 → 1\.37\.2 moves more than one minor \(skipping 1\.34–1\.36\)/,
    );
    assert.match(message, /etcd 3\.5\.21 → 3\.7\.3 moves more than one minor \(skipping 3\.6\)/);
    assert.match(message, /run `npm run down`, remove \/s\/app-1, and `npm run up`/);
  });

  it("refuses a downgrade", () => {
    const message = upgradeRefusal("c", "/d", at("1.37.2", "3.7.3"), at("1.36.3", "3.7.3")) ?? "";
    assert.match(message, /Kubernetes 1\.36\.3 is older than 1\.37\.2: a downgrade/);
    assert.doesNotMatch(message, /etcd 3\.7\.3 →/);
  });

  it("reads the record; data without one was written by the pins before records began; none without data", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "data-versions-"));
    try {
      const record = path.join(dir, "versions.json");
      const etcd = path.join(dir, "etcd");
      assert.equal(readDataVersions(record, etcd), undefined);
      fs.mkdirSync(etcd);
      assert.deepEqual(readDataVersions(record, etcd), UNRECORDED_DATA_VERSIONS);
      writeDataVersions(record, at("1.37.2", "3.7.3"));
      assert.deepEqual(readDataVersions(record, etcd), at("1.37.2", "3.7.3"));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("takes the running versions from the built binaries themselves, which are the pinned ones", () => {
    const env = toolchainEnv();
    const versions = binaryVersions(resolveBinaries(env), env);
    assert.deepEqual(versions, at(pinned("KUBERNETES_VERSION"), pinned("ETCD_VERSION")));
  });

  it("`up` refuses every cluster whose data the releases may not take, in one message, before starting any", async () => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "data-versions-up-"));
    try {
      // Two clusters made by the earlier pins (an etcd directory, no record), one new.
      for (const name of ["old-a", "old-b"])
        fs.mkdirSync(path.join(stateDir, name, "etcd"), { recursive: true });
      const clusters = new LocalClusters(stateDir, { env: toolchainEnv() });
      await assert.rejects(clusters.up(["old-a", "new", "old-b"]), (err: Error) => {
        const lines = err.message.split("\n");
        assert.equal(lines.length, 2, err.message);
        assert.match(lines[0] ?? "", /^local cluster "old-a": its data was written by Kubernetes 1\.33\.4/);
        assert.match(lines[1] ?? "", /^local cluster "old-b": /);
        return true;
      });
      // Nothing was started or written: no cluster directory for the new one, no ports, no pids.
      assert.deepEqual(fs.readdirSync(stateDir).sort(), ["old-a", "old-b"]);
      assert.deepEqual(fs.readdirSync(path.join(stateDir, "old-a")), ["etcd"]);
    } finally {
      fs.rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
