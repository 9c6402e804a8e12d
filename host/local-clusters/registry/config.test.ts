import { strict as assert } from "node:assert";
import { parse } from "yaml";
import { containerdHostsToml, registryConfig } from "./config";

describe("the local registry's configuration files (pure)", () => {
  it("distribution listens on loopback only, over TLS, with blobs on disk and no auth", () => {
    const config = parse(
      registryConfig({ port: 41000, dataDir: "/s/.registry/data", certFile: "/c.crt", keyFile: "/c.key" }),
    );
    assert.equal(config.version, 0.1);
    assert.equal(config.http.addr, "127.0.0.1:41000");
    assert.deepEqual(config.http.tls, { certificate: "/c.crt", key: "/c.key" });
    assert.deepEqual(config.storage.filesystem, { rootdirectory: "/s/.registry/data" });
    assert.equal(config.auth, undefined);
  });

  it("containerd pulls from the registry at the node's view of it, verifying its CA", () => {
    const toml = containerdHostsToml("172.30.0.5:41000", "/s/.registry/pki/ca.crt");
    assert.match(toml, /^server = "https:\/\/172\.30\.0\.5:41000"$/m);
    assert.match(toml, /^\[host\."https:\/\/172\.30\.0\.5:41000"\]$/m);
    assert.match(toml, /^ {2}capabilities = \["pull", "resolve"\]$/m);
    assert.match(toml, /^ {2}ca = "\/s\/\.registry\/pki\/ca\.crt"$/m);
    assert.doesNotMatch(toml, /skip_verify/);
  });
});
