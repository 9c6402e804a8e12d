import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stringify } from "yaml";
import { clusterEndpoint } from "../bind/cluster-endpoint";
import { flattenKubeconfig } from "./flatten";

describe("kubeconfig flattening (a CA given as a file)", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kubeconfig-flatten-"));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const pem = "-----BEGIN CERTIFICATE-----\nMIIBfile\n-----END CERTIFICATE-----\n";
  const read = (f: string) => fs.readFileSync(f);

  it("inlines a relative certificate-authority file, so the konnector kubeconfig gets the CA", () => {
    fs.mkdirSync(path.join(dir, "pki"), { recursive: true });
    fs.writeFileSync(path.join(dir, "pki", "ca.crt"), pem);
    const file = path.join(dir, "kubeconfig");
    const text = stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "c",
          cluster: { server: "https://cp.example.com:6443", "certificate-authority": "pki/ca.crt" },
        },
      ],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
      "current-context": "ctx",
    });
    fs.writeFileSync(file, text);
    const flat = flattenKubeconfig(text, file, read);
    assert.deepEqual(clusterEndpoint(flat), { server: "https://cp.example.com:6443", caPem: pem });
    // Without flattening, a text reading finds no CA at all (the bug this fixes).
    assert.equal(clusterEndpoint(text).caPem, undefined);
  });

  it("leaves a kubeconfig that references no file byte for byte as it was", () => {
    const text = stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "c",
          cluster: {
            server: "https://x:6443",
            "certificate-authority-data": Buffer.from(pem).toString("base64"),
          },
        },
      ],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
      "current-context": "ctx",
    });
    assert.equal(flattenKubeconfig(text, path.join(dir, "other"), read), text);
  });
});
