import { strict as assert } from "node:assert";
import { parse } from "yaml";
import { backendFlags, backendUrls } from "./backend-plan";
import { clusterEndpoint } from "./cluster-endpoint";
import { exportTemplateManifest } from "./export-template";
import type { EnvironmentConfig } from "../config/schema";
import { environmentSchema } from "../../components/config/schema";
import { renderDexConfig } from "../oidc/dex-config";

function config(extra: Record<string, unknown> = {}): EnvironmentConfig {
  return environmentSchema.parse({
    environment: "test",
    controlPlane: { name: "cp", infrastructure: "local" },
    ...extra,
  });
}

describe("klutch-bind backend plan", () => {
  it("derives the callback and a Dex issuer served under the backend's host", () => {
    const c = config({ bind: { externalAddress: "https://bind.example.com/" } });
    assert.deepEqual(backendUrls(c.bind, c.oidc), {
      externalAddress: "https://bind.example.com",
      host: "bind.example.com",
      callbackUrl: "https://bind.example.com/callback",
      authorizeUrl: "https://bind.example.com/authorize",
      issuerUrl: "https://bind.example.com/dex",
      dexPathPrefix: "/dex",
    });
  });

  it("uses a configured issuer as is and serves no Dex path for Keycloak", () => {
    const c = config({
      bind: { externalAddress: "https://klutch.example.com:8443/bind" },
      oidc: { provider: "keycloak", issuerUrl: "https://sso.example.com/realms/klutch", clientId: "bind" },
    });
    const urls = backendUrls(c.bind, c.oidc);
    assert.equal(urls.callbackUrl, "https://klutch.example.com:8443/bind/callback");
    assert.equal(urls.issuerUrl, "https://sso.example.com/realms/klutch");
    assert.equal(urls.dexPathPrefix, undefined);
  });

  it("passes every flag the backend requires, with secrets only as $(ENV) references", () => {
    const c = config({ bind: { namespacePrefix: "tenant", prettyName: "ACME Data" } });
    const flags = backendFlags({
      bind: c.bind,
      urls: backendUrls(c.bind, c.oidc),
      apiServerAddress: "https://10.0.0.1:6443",
    });
    const byName = new Map(flags.map((f) => [f.slice(2, f.indexOf("=")), f.slice(f.indexOf("=") + 1)]));
    assert.deepEqual(Object.fromEntries(byName), {
      "namespace-prefix": "tenant",
      "pretty-name": "ACME Data",
      "consumer-scope": "Namespaced",
      "listen-address": "0.0.0.0:8080",
      "oidc-issuer-url": "https://bind.klutch.localhost/dex",
      "oidc-callback-url": "https://bind.klutch.localhost/callback",
      "oidc-authorize-url": "https://bind.klutch.localhost/authorize",
      "oidc-issuer-client-id": "$(OIDC_CLIENT_ID)",
      "oidc-issuer-client-secret": "$(OIDC_CLIENT_SECRET)",
      "cookie-signing-key": "$(COOKIE_SIGNING_KEY)",
      "cookie-encryption-key": "$(COOKIE_ENCRYPTION_KEY)",
      "external-address": "https://10.0.0.1:6443",
      "external-ca-file": "/etc/klutch-bind/external-ca/ca.crt",
    });
  });

  it("passes a configured authorize URL instead of the derived one", () => {
    const c = config({ bind: { authorizeUrl: "https://login.example.com/bind/authorize" } });
    assert.equal(backendUrls(c.bind, c.oidc).authorizeUrl, "https://login.example.com/bind/authorize");
  });

  it("renders the servicebindings export template as seed 004 shows it", () => {
    const sb = config().exportedApis.find((a) => a.resource === "servicebindings")!;
    assert.deepEqual(exportTemplateManifest(sb, { team: "x" }), {
      apiVersion: "example-backend.klutch.anynines.com/v1alpha1",
      kind: "APIServiceExportTemplate",
      metadata: { name: "servicebindings", labels: { team: "x" } },
      spec: {
        APIServiceSelector: { group: "anynines.com", resource: "servicebindings", version: "v1" },
        permissionClaims: [
          { group: "", resource: "secrets", version: "v1", selector: { owner: "Provider" } },
          { group: "", resource: "configmaps", version: "v1", selector: { owner: "Provider" } },
        ],
      },
    });
  });
});

describe("Dex config", () => {
  const inputs = {
    issuerUrl: "https://bind.example.com/dex",
    clientId: "klutch-bind",
    clientSecret: "s3cr3t",
    callbackUrl: "https://bind.example.com/callback",
    clientName: "Klutch",
  };

  it("has one static client whose only redirect is the backend's callback", () => {
    const doc = parse(renderDexConfig({ ...inputs, connectors: [] })) as Record<string, any>;
    assert.equal(doc.issuer, "https://bind.example.com/dex");
    assert.deepEqual(doc.staticClients, [
      {
        id: "klutch-bind",
        name: "Klutch",
        secret: "s3cr3t",
        redirectURIs: ["https://bind.example.com/callback"],
      },
    ]);
    assert.equal(doc.storage.type, "sqlite3");
    assert.equal(doc.enablePasswordDB, true);
    assert.equal(doc.connectors, undefined);
  });

  it("uses configured connectors instead of the password database", () => {
    const connectors = [
      { type: "github", id: "github", name: "GitHub", config: { orgs: [{ name: "acme" }] } },
    ];
    const doc = parse(renderDexConfig({ ...inputs, connectors })) as Record<string, any>;
    assert.equal(doc.enablePasswordDB, false);
    assert.deepEqual(doc.connectors, connectors);
  });
});

describe("clusterEndpoint", () => {
  const kubeconfig = (ca: Record<string, string>) => `
apiVersion: v1
kind: Config
current-context: b
contexts:
  - name: a
    context: { cluster: one, user: u }
  - name: b
    context: { cluster: two, user: u }
clusters:
  - name: one
    cluster: { server: "https://one:6443" }
  - name: two
    cluster: ${JSON.stringify({ server: "https://two:6443", ...ca })}
users:
  - name: u
    user: { token: not-returned }
`;

  it("returns the current context's server and decoded CA, never credentials", () => {
    const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const e = clusterEndpoint(
      kubeconfig({ "certificate-authority-data": Buffer.from(pem).toString("base64") }),
    );
    assert.deepEqual(e, { server: "https://two:6443", caPem: pem });
    assert.ok(!JSON.stringify(e).includes("not-returned"));
  });

  it("honours an explicit context and a CA file", () => {
    assert.deepEqual(clusterEndpoint(kubeconfig({}), "a"), { server: "https://one:6443" });
    const e = clusterEndpoint(
      kubeconfig({ "certificate-authority": "/ca.pem" }),
      undefined,
      (f) => `file:${f}`,
    );
    assert.equal(e.caPem, "file:/ca.pem");
  });

  it("names the missing context", () => {
    assert.throws(() => clusterEndpoint(kubeconfig({}), "nope"), /no context nope/);
  });
});
