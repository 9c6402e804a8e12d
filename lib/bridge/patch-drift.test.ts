import { strict as assert } from "node:assert";
import type { WatchedObject } from "./drift";
import { keysOwnedBy, patchDriftOf } from "./patch-drift";

const M = "klutch-bridge-0123456789abcdef";

/** A ConfigMap as the API server returns it, its managedFields in FieldsV1. */
const configMap = (
  entries: { manager: string; data?: string[]; binaryData?: string[]; type?: string }[],
): WatchedObject => ({
  metadata: {
    name: "wg-gateway-flows",
    managedFields: entries.map((e) => ({
      manager: e.manager,
      operation: "Apply",
      fieldsType: e.type ?? "FieldsV1",
      fieldsV1: {
        "f:metadata": { "f:labels": { "f:app.kubernetes.io/name": {} } },
        ...(e.data
          ? { "f:data": Object.fromEntries([[".", {}], ...e.data.map((k) => [`f:${k}`, {}])]) }
          : {}),
        ...(e.binaryData
          ? { "f:binaryData": Object.fromEntries(e.binaryData.map((k) => [`f:${k}`, {}])) }
          : {}),
      },
    })),
  },
});

describe("bridge drift in objects groups share: a group's keys by its field manager", () => {
  it("reads the data and binaryData keys a manager owns, nothing of other managers, fields or formats", () => {
    const o = configMap([
      { manager: M, data: ["flows-10.0.0.2.nft", "client-10.0.0.2.conf"], binaryData: ["blob"] },
      { manager: "kubectl-edit", data: ["other"] },
      { manager: M, data: ["ignored"], type: "FieldsV2" },
    ]);
    assert.deepEqual([...keysOwnedBy(o, M)].sort(), ["blob", "client-10.0.0.2.conf", "flows-10.0.0.2.nft"]);
    assert.deepEqual([...keysOwnedBy(o, "nobody")], []);
    assert.deepEqual([...keysOwnedBy(undefined, M)], []);
    assert.deepEqual(
      [
        ...keysOwnedBy(
          { metadata: { managedFields: [{ manager: M, fieldsType: "FieldsV1", fieldsV1: "x" }] } },
          M,
        ),
      ],
      [],
    );
  });

  it("an update that takes a key from the manager, or removes it, is drift naming the key; one that keeps or shares them is not", () => {
    const before = configMap([{ manager: M, data: ["a", "b"] }]);
    assert.deepEqual(
      patchDriftOf(
        "ConfigMap",
        "update",
        before,
        configMap([
          { manager: M, data: ["b"] },
          { manager: "kubectl-edit", data: ["a"] },
        ]),
        M,
      ),
      {
        kind: "ConfigMap",
        name: "wg-gateway-flows",
        change: "changed",
        keys: ["a"],
      },
    );
    assert.deepEqual(
      patchDriftOf("ConfigMap", "update", before, configMap([]), M)?.keys,
      ["a", "b"],
      "both removed",
    );
    assert.equal(patchDriftOf("ConfigMap", "update", before, before, M), undefined);
    assert.equal(
      patchDriftOf(
        "ConfigMap",
        "update",
        before,
        configMap([
          { manager: M, data: ["a", "b"] },
          { manager: "other", data: ["a"] },
        ]),
        M,
      ),
      undefined,
      "an apply of the same value shares the key",
    );
    assert.equal(
      patchDriftOf("ConfigMap", "update", configMap([]), configMap([{ manager: M, data: ["a"] }]), M),
      undefined,
      "the group's own run adds",
    );
    assert.equal(patchDriftOf("ConfigMap", "update", undefined, before, M), undefined, "nothing seen before");
  });

  it("a deleted object is drift of every key the manager owned, as last seen", () => {
    const last = configMap([{ manager: M, data: ["a"] }]);
    assert.deepEqual(patchDriftOf("ConfigMap", "delete", last, configMap([]), M), {
      kind: "ConfigMap",
      name: "wg-gateway-flows",
      change: "deleted",
      keys: ["a"],
    });
    assert.deepEqual(
      patchDriftOf("ConfigMap", "delete", undefined, last, M)?.keys,
      ["a"],
      "from the deleted object itself",
    );
    assert.equal(
      patchDriftOf("ConfigMap", "delete", configMap([{ manager: "x", data: ["a"] }]), configMap([]), M),
      undefined,
    );
  });
});
