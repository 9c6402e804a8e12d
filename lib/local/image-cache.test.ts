import { strict as assert } from "node:assert";
import { archiveRepository, archivesToPrune } from "./image-cache";

describe("local image cache pruning", () => {
  it("reads the repository from an archive's name, versions with dashes and docker archives included", () => {
    assert.equal(archiveRepository("bridge-0.1.0-node24.21.0-pulumi3.259.0-0cfe4e68557e.oci.tar"), "bridge");
    assert.equal(
      archiveRepository("function-klutch-0.1.0-node24.21.0-14709ecee9bf.docker.oci.tar"),
      "function-klutch",
    );
    assert.equal(
      archiveRepository("provider-kubernetes-0.18.0-5bde24d31fc8.docker.oci.tar"),
      "provider-kubernetes",
    );
    assert.equal(archiveRepository("haproxy-2.6.12-1_deb12u4-d435cd9269d2.oci.tar"), "haproxy");
    for (const other of [
      ".index",
      "packages",
      "bridge-0.1.0-abc.oci.tar",
      "x.oci.tar.tmp-1-ab",
      ".layer-1-2.tar",
    ]) {
      assert.equal(archiveRepository(other), undefined, other);
    }
  });

  it("keeps the newest three of each repository and drops the rest", () => {
    const bridge = (n: number) => ({
      file: `bridge-0.1.0-${String(n).padStart(12, "0")}.oci.tar`,
      mtimeMs: n,
    });
    const archives = [1, 2, 3, 4, 5]
      .map(bridge)
      .concat([{ file: "pause-3.10.1-f224b1613400.oci.tar", mtimeMs: 0 }]);
    assert.deepEqual(archivesToPrune(archives, []), [bridge(1).file, bridge(2).file]);
  });

  it("never drops an archive in use, however old", () => {
    const a = (n: number) => ({ file: `postgres-15.18-${String(n).padStart(12, "0")}.oci.tar`, mtimeMs: n });
    assert.deepEqual(archivesToPrune([1, 2, 3, 4].map(a), [a(1).file]), []);
    assert.deepEqual(archivesToPrune([1, 2, 3, 4].map(a), [a(2).file], 1), [a(1).file, a(3).file]);
  });
});
