import { strict as assert } from "node:assert";
import { SECRET_MARKER, SECRET_SIG } from "../pulumi-secret";
import { rewrap, union, unwrap } from "./wire-props";

const secret = (value: unknown) => ({ [SECRET_SIG]: SECRET_MARKER, value });

describe("the plugin's wire properties (lib/provider/wire-props.ts)", () => {
  it("reveals secrets at any depth and remembers which top-level properties held one", () => {
    const { plain, secretKeys } = unwrap({
      kubeconfig: secret("apiVersion: v1"),
      ports: [30000, secret(30001)],
      nested: { a: { b: secret("x") }, c: 1 },
      namespace: "team-a",
    });
    assert.deepEqual(plain, {
      kubeconfig: "apiVersion: v1",
      ports: [30000, 30001],
      nested: { a: { b: "x" }, c: 1 },
      namespace: "team-a",
    });
    assert.deepEqual([...secretKeys].sort(), ["kubeconfig", "nested", "ports"]);
  });

  it("drops the serialized provider an aliased dynamic resource's state still carries", () => {
    const { plain } = unwrap({ __provider: "exports.handler = ...", length: 32 });
    assert.deepEqual(plain, { length: 32 });
  });

  it("marks the outputs of secret inputs secret again, once, and leaves the others", () => {
    const out = rewrap(
      { kubeconfig: "k", pods: ["p"], value: secret("v") },
      new Set(["kubeconfig", "value"]),
    );
    assert.deepEqual(out, { kubeconfig: secret("k"), pods: ["p"], value: secret("v") });
  });

  it("round-trips: unwrap then rewrap gives the wire form back for top-level secrets", () => {
    const wire = { a: secret("s"), b: 2 };
    const { plain, secretKeys } = unwrap(wire);
    assert.deepEqual(rewrap(plain, secretKeys), wire);
  });

  it("treats missing properties as empty", () => {
    assert.deepEqual(unwrap(undefined), { plain: {}, secretKeys: new Set() });
    assert.deepEqual(rewrap(undefined, new Set(["a"])), {});
    assert.deepEqual([...union(new Set(["a"]), new Set(["b", "a"]))], ["a", "b"]);
  });
});
