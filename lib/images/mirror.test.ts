import { strict as assert } from "node:assert";
import { MIRROR_PATTERN, mirroredImage, repositoryAndTag, splitRegistry } from "./mirror";

describe("images from an operator's registry mirror", () => {
  it("finds the registry as distribution/reference does: a first component with a dot, a colon or localhost; else Docker Hub, library/ for one component", () => {
    assert.deepEqual(splitRegistry("ghcr.io/dexidp/dex:v2.41.1"), {
      registry: "ghcr.io",
      rest: "dexidp/dex:v2.41.1",
    });
    assert.deepEqual(splitRegistry("localhost:5000/klutch/bridge:1"), {
      registry: "localhost:5000",
      rest: "klutch/bridge:1",
    });
    assert.deepEqual(splitRegistry("alpine/socat:1.8.0.0"), {
      registry: "docker.io",
      rest: "alpine/socat:1.8.0.0",
    });
    assert.deepEqual(splitRegistry("haproxy:2.6.12"), {
      registry: "docker.io",
      rest: "library/haproxy:2.6.12",
    });
    assert.deepEqual(splitRegistry("docker.io/library/haproxy:2.6.12"), {
      registry: "docker.io",
      rest: "library/haproxy:2.6.12",
    });
  });

  it("keeps the repository's path, tag and digest below the mirror (with or without a path of its own)", () => {
    assert.equal(
      mirroredImage("ghcr.io/dexidp/dex:v2.41.1", "mirror.example.com"),
      "mirror.example.com/dexidp/dex:v2.41.1",
    );
    assert.equal(
      mirroredImage(
        "xpkg.upbound.io/crossplane-contrib/provider-kubernetes:v1.3.1",
        "mirror.example.com:5000/klutch/",
      ),
      "mirror.example.com:5000/klutch/crossplane-contrib/provider-kubernetes:v1.3.1",
    );
    const digest = `sha256:${"a".repeat(64)}`;
    assert.equal(
      mirroredImage(`haproxy@${digest}`, "m.example.com"),
      `m.example.com/library/haproxy@${digest}`,
    );
  });

  it("splits a tagged reference for a chart's repository and tag; a digest or no tag has none", () => {
    assert.deepEqual(repositoryAndTag("mirror.example.com:5000/crossplane/crossplane:v2.4.0"), {
      repository: "mirror.example.com:5000/crossplane/crossplane",
      tag: "v2.4.0",
    });
    assert.equal(repositoryAndTag("mirror.example.com:5000/crossplane/crossplane"), undefined);
    assert.equal(repositoryAndTag(`m.example.com/c@sha256:${"a".repeat(64)}`), undefined);
  });

  it("takes a mirror as a host, a port and a path; not a scheme, a tag or an uppercase name", () => {
    for (const ok of [
      "mirror.example.com",
      "mirror.example.com:5000",
      "harbor.example.com/proxy-cache",
      "localhost:5000",
    ])
      assert.match(ok, MIRROR_PATTERN);
    for (const bad of [
      "https://mirror.example.com",
      "mirror",
      "Mirror.example.com",
      "mirror.example.com/x:1",
    ])
      assert.doesNotMatch(bad, MIRROR_PATTERN);
  });
});
