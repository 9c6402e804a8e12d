import { strict as assert } from "node:assert";
import { readLocalPackages } from "./packages";

const files: Record<string, string> = {
  "/state/.registry/packages.json": JSON.stringify({
    "function-klutch": { repository: "klutch/function-klutch", tag: "v0.1.0-gabc" },
  }),
  "/state/.registry/pki/ca.crt": "PEM",
};
const read = (f: string) => {
  const text = files[f];
  if (text === undefined) throw new Error(`ENOENT ${f}`);
  return text;
};

describe("the project's packages on the local registry (pure)", () => {
  it("references each at the registry as the node reaches it, with the registry's CA", () => {
    assert.deepEqual(readLocalPackages("/state", "172.30.0.5:41000", read), {
      ok: true,
      packages: {
        registry: "172.30.0.5:41000",
        pushRegistry: "127.0.0.1:41000",
        references: { "function-klutch": "172.30.0.5:41000/klutch/function-klutch:v0.1.0-gabc" },
        caBundle: "PEM",
      },
    });
  });

  it("says why there are none", () => {
    assert.deepEqual(readLocalPackages("/state", undefined, read), {
      ok: false,
      problem: "the node was started without the local package registry",
    });
    assert.match(
      String((readLocalPackages("/other", "172.30.0.5:1", read) as { problem: string }).problem),
      /no packages have been published \(\/other\/\.registry\/packages\.json/,
    );
  });
});
