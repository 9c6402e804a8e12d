import { strict as assert } from "node:assert";
import { imageCrossplaneVersion } from "./crossplane-upgrade-guard";

describe("CrossplaneUpgradeGuard: the running core's version from its image", () => {
  it("reads the published tag, the local nodes' tag and a digest-pinned reference", () => {
    assert.equal(imageCrossplaneVersion("xpkg.crossplane.io/crossplane/crossplane:v2.4.0"), "2.4.0");
    assert.equal(imageCrossplaneVersion("klutch.local/crossplane:1.20.11-0a1b2c3d4e5f"), "1.20.11");
    assert.equal(imageCrossplaneVersion("registry.example.com:5000/crossplane:v1.20.3@sha256:abc"), "1.20.3");
    assert.equal(imageCrossplaneVersion("registry.example.com:5000/crossplane"), undefined);
    assert.equal(imageCrossplaneVersion("crossplane:latest"), undefined);
  });
});
