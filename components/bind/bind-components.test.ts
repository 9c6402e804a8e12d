import { strict as assert } from "node:assert";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { parse } from "yaml";
import { KlutchBindBackend, type KlutchBindBackendArgs } from "./bind-backend";
import { OidcProvider } from "./oidc-provider";
import { backendUrls } from "../../lib/bind/backend-plan";
import { environmentSchema } from "../config/schema";
import { klutchProgram } from "../../programs/stack/program";
import { randomKeyProvider } from "../../providers/dynamic/random-key";
import { fakeLocalStateDir } from "../../test/helpers/kubeconfig";
import {
  isSecretEnvelope,
  mockPulumi,
  plainStrings,
  settle,
  type MockedRun,
  type Registered,
} from "../../test/helpers/mocks";

const RANDOM_KEY = "pulumi-nodejs:dynamic/klutch:RandomKey";
const dynamicProviders = { [RANDOM_KEY]: randomKeyProvider };

function run(config: Record<string, unknown> = {}): MockedRun {
  return mockPulumi(config, "test", { dynamicProviders });
}

function envConfig(extra: Record<string, unknown> = {}) {
  const stateDir = fakeLocalStateDir(["control-plane", "app-1"]);
  return {
    environment: "local",
    controlPlane: { name: "control-plane", infrastructure: "local" },
    appClusters: [{ name: "app-1", infrastructure: "local" }],
    localClusters: { stateDir },
    ...extra,
  };
}

function counts(resources: Registered[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of resources) out[r.type] = (out[r.type] ?? 0) + 1;
  return out;
}

/** Secret values the RandomKey resources generated, read back from the mock's state. */
async function generatedKeys(mocked: MockedRun): Promise<string[]> {
  await settle();
  return mocked.ofType(RANDOM_KEY).map((r) => String(r.outputs?.value));
}

describe("klutch-bind components (mocks)", () => {
  it("the environment installs the backend, Dex and one export template per configured API", async () => {
    const mocked = run(envConfig());
    klutchProgram();
    await settle();

    const bindTypes = mocked.resources.filter((r) => r.type.startsWith("klutch:bind:"));
    assert.deepEqual(counts(bindTypes), {
      "klutch:bind:OidcProvider": 1,
      "klutch:bind:KlutchBindBackend": 1,
      "klutch:bind:ExportedApi": 4,
      "klutch:bind:AppClusterBinding": 1,
    });
    const templates = mocked.ofType(
      "kubernetes:example-backend.klutch.anynines.com/v1alpha1:APIServiceExportTemplate",
    );
    assert.deepEqual(
      templates.map((t) => [
        t.inputs.metadata.name,
        t.inputs.metadata.namespace,
        t.inputs.spec.APIServiceSelector.resource,
      ]),
      [
        ["postgresqlinstances", "crossplane-system", "postgresqlinstances"],
        ["servicebindings", "crossplane-system", "servicebindings"],
        ["backups", "crossplane-system", "backups"],
        ["restores", "crossplane-system", "restores"],
      ],
    );
    for (const t of templates) assert.match(t.provider ?? "", /local-control-plane-provider/);

    // Three keys generated: Dex's client secret and the two cookie keys.
    assert.deepEqual(
      mocked.ofType(RANDOM_KEY).map((r) => [r.name, r.inputs.length, r.inputs.encoding]),
      [
        ["local-oidc-client-secret", 32, "hex"],
        ["local-bind-cookie-signing-key", 32, "base64"],
        ["local-bind-cookie-encryption-key", 32, "base64"],
      ],
    );
    // On the app cluster: its namespace and its binding's objects only.
    for (const r of mocked.resources.filter((x) => x.type.startsWith("kubernetes:"))) {
      if (/app-1-provider/.test(r.provider ?? "")) {
        assert.ok(
          r.type === "kubernetes:core/v1:Namespace" || r.name.startsWith("local-app-1-binding-"),
          r.name,
        );
      }
    }
  });

  it("exports only the configured APIs", async () => {
    const mocked = run(
      envConfig({
        exportedApis: [{ group: "anynines.com", version: "v1", resource: "postgresqlinstances" }],
      }),
    );
    klutchProgram();
    await settle();
    assert.equal(mocked.ofType("klutch:bind:ExportedApi").length, 1);
  });

  it("backend: exact resources, RBAC without cluster-admin or wildcards, secrets only as secrets", async () => {
    const mocked = run(envConfig());
    klutchProgram();
    await settle();
    const onCp = mocked.resources.filter(
      (r) => r.type.startsWith("kubernetes:") && /control-plane-provider/.test(r.provider ?? ""),
    );
    const bind = onCp.filter((r) => r.name.startsWith("local-bind-") || r.name.startsWith("local-oidc-"));
    assert.deepEqual(counts(bind), {
      "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition": 6,
      "kubernetes:core/v1:ServiceAccount": 2,
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole": 1,
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": 1,
      "kubernetes:core/v1:Secret": 3,
      "kubernetes:apps/v1:Deployment": 2,
      "kubernetes:core/v1:Service": 2,
      "kubernetes:core/v1:PersistentVolumeClaim": 1,
      "kubernetes:networking.k8s.io/v1:Ingress": 1,
    });
    // The environment made the namespace already; the backend makes no second one.
    assert.equal(bind.filter((r) => r.type === "kubernetes:core/v1:Namespace").length, 0);

    for (const b of mocked.ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding")) {
      assert.notEqual(b.inputs.roleRef.name, "cluster-admin");
    }
    for (const role of mocked.ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")) {
      for (const rule of role.inputs.rules as {
        apiGroups: string[];
        resources: string[];
        verbs: string[];
      }[]) {
        assert.ok(
          ![...rule.apiGroups, ...rule.resources, ...rule.verbs].includes("*"),
          `wildcard in ${role.name}`,
        );
      }
    }

    const secrets = Object.fromEntries(
      mocked.ofType("kubernetes:core/v1:Secret").map((s) => [s.name, s.inputs]),
    );
    for (const name of ["local-bind-secret", "local-oidc-config"]) {
      assert.ok(isSecretEnvelope(secrets[name]?.stringData), `${name} stringData is a secret`);
    }
    const keys = await generatedKeys(mocked);
    assert.equal(keys.length, 3);

    const deployment = mocked
      .ofType("kubernetes:apps/v1:Deployment")
      .find((d) => d.name === "local-bind-deployment")!;
    const container = deployment.inputs.spec.template.spec.containers[0];
    const flags = (container.args as string[]).map((f) => f.split("=")[0]);
    for (const required of [
      "--oidc-issuer-client-id",
      "--oidc-issuer-client-secret",
      "--oidc-issuer-url",
      "--oidc-callback-url",
      "--cookie-signing-key",
      "--cookie-encryption-key",
      "--external-address",
      "--external-ca-file",
      "--namespace-prefix",
      "--pretty-name",
      "--consumer-scope",
      "--listen-address",
    ]) {
      assert.ok(flags.includes(required), `backend flag ${required}`);
    }
    // The API address konnectors get is the control plane's, from its kubeconfig.
    assert.ok((container.args as string[]).includes("--external-address=https://127.0.0.1:6443"));
    assert.deepEqual(
      container.env.map((e: { name: string; valueFrom: { secretKeyRef: { name: string } } }) => [
        e.name,
        e.valueFrom.secretKeyRef.name,
      ]),
      [
        ["OIDC_CLIENT_ID", "klutch-bind-backend"],
        ["OIDC_CLIENT_SECRET", "klutch-bind-backend"],
        ["COOKIE_SIGNING_KEY", "klutch-bind-backend"],
        ["COOKIE_ENCRYPTION_KEY", "klutch-bind-backend"],
      ],
    );
    assert.equal(deployment.inputs.spec.template.spec.serviceAccountName, "klutch-bind-backend");
    assert.equal(deployment.inputs.metadata.annotations["pulumi.com/skipAwait"], "true");

    const ingress = mocked.ofType("kubernetes:networking.k8s.io/v1:Ingress")[0]!;
    assert.equal(ingress.inputs.metadata.annotations["cert-manager.io/cluster-issuer"], "letsencrypt");
    assert.deepEqual(
      ingress.inputs.spec.rules[0].http.paths.map(
        (p: { path: string; backend: { service: { name: string } } }) => [p.path, p.backend.service.name],
      ),
      [
        ["/dex", "dex"],
        ["/", "klutch-bind-backend"],
      ],
    );

    // No generated secret appears anywhere outside a secret envelope.
    const plain = mocked.resources.flatMap((r) => plainStrings(r.inputs));
    for (const key of keys) assert.ok(!plain.some((s) => s.includes(key)), "generated key in plain inputs");
  });

  it("Dex: a config whose client redirects only to the backend's callback, no API access", async () => {
    const mocked = run(envConfig({ bind: { externalAddress: "https://bind.example.com" } }));
    klutchProgram();
    await settle();
    const config = mocked.ofType("kubernetes:core/v1:Secret").find((s) => s.name === "local-oidc-config")!;
    const text = (config.inputs.stringData as { value: Record<string, string> }).value["config.yaml"]!;
    const dex = parse(text) as {
      issuer: string;
      staticClients: { redirectURIs: string[]; secret: string }[];
    };
    assert.equal(dex.issuer, "https://bind.example.com/dex");
    assert.deepEqual(dex.staticClients[0]!.redirectURIs, ["https://bind.example.com/callback"]);
    assert.match(dex.staticClients[0]!.secret, /^[0-9a-f]{64}$/);
    const account = mocked
      .ofType("kubernetes:core/v1:ServiceAccount")
      .find((s) => s.name === "local-oidc-account")!;
    assert.equal(account.inputs.automountServiceAccountToken, false);
    // No RBAC for Dex at all.
    assert.ok(
      mocked.resources
        .filter((r) => r.type.includes("rbac.authorization.k8s.io"))
        .every((r) => !r.name.startsWith("local-oidc")),
    );
  });

  it("Keycloak: no workload, the configured issuer and the client secret kept secret", async () => {
    const mocked = run();
    const c = environmentSchema.parse({
      environment: "t",
      controlPlane: { name: "cp", infrastructure: "local" },
      oidc: { provider: "keycloak", issuerUrl: "https://sso.example.com/realms/k", clientId: "bind" },
    });
    const urls = backendUrls(c.bind, c.oidc);
    const oidc = new OidcProvider("kc", {
      provider: new k8s.Provider("cp", { kubeconfig: "fake" }),
      namespace: "bind",
      oidc: c.oidc,
      issuerUrl: urls.issuerUrl,
      callbackUrl: urls.callbackUrl,
      clientName: "Klutch",
      clientSecret: pulumi.secret("kc-secret-value"),
    });
    await settle();
    assert.equal(oidc.service, undefined);
    assert.deepEqual(mocked.resources.map((r) => r.type).sort(), [
      "klutch:bind:OidcProvider",
      "pulumi:providers:kubernetes",
    ]);
    assert.equal(await pulumi.isSecret(oidc.clientSecret), true);
    assert.throws(
      () =>
        new OidcProvider("kc2", {
          provider: new k8s.Provider("cp2", { kubeconfig: "fake" }),
          namespace: "bind",
          oidc: c.oidc,
          issuerUrl: urls.issuerUrl,
          callbackUrl: urls.callbackUrl,
          clientName: "Klutch",
        }),
      /clientSecret/,
    );
  });

  function backendArgs(
    bind: Record<string, unknown>,
    extra: Partial<KlutchBindBackendArgs> = {},
  ): KlutchBindBackendArgs {
    const c = environmentSchema.parse({
      environment: "t",
      controlPlane: { name: "cp", infrastructure: "local" },
      bind,
    });
    return {
      provider: new k8s.Provider("cp", { kubeconfig: "fake" }),
      bind: c.bind,
      urls: backendUrls(c.bind, c.oidc),
      exportedApis: c.exportedApis,
      oidc: { clientId: "klutch-bind", clientSecret: pulumi.secret("x") },
      apiServer: { address: "https://api.example.com:6443", caPem: "PEM" },
      ...extra,
    };
  }

  it("on its own: creates its namespace; Gateway API exposure with a provided certificate", async () => {
    const mocked = run();
    new KlutchBindBackend(
      "b",
      backendArgs(
        { exposure: "gateway", tls: { source: "provided" }, gatewayClassName: "istio" },
        {
          tls: { certificate: pulumi.secret("CERT"), key: pulumi.secret("KEY") },
          cookieSigningKey: pulumi.secret(Buffer.alloc(32, 1).toString("base64")),
          cookieEncryptionKey: pulumi.secret(Buffer.alloc(16, 2).toString("base64")),
        },
      ),
    );
    await settle();
    assert.equal(mocked.ofType("kubernetes:core/v1:Namespace").length, 1);
    // Keys given in config: nothing generated.
    assert.equal(mocked.ofType(RANDOM_KEY).length, 0);
    assert.equal(mocked.ofType("kubernetes:networking.k8s.io/v1:Ingress").length, 0);
    const gw = mocked.ofType("kubernetes:gateway.networking.k8s.io/v1:Gateway");
    assert.equal(gw.length, 1);
    assert.equal(gw[0]!.inputs.spec.gatewayClassName, "istio");
    assert.deepEqual(
      gw[0]!.inputs.metadata.annotations,
      {},
      "no cert-manager annotation for a provided cert",
    );
    assert.equal(mocked.ofType("kubernetes:gateway.networking.k8s.io/v1:HTTPRoute").length, 1);
    const tls = mocked.ofType("kubernetes:core/v1:Secret").find((s) => s.name === "b-tls")!;
    assert.equal(tls.inputs.type, "kubernetes.io/tls");
    assert.ok(isSecretEnvelope(tls.inputs.stringData));
    assert.ok(!mocked.resources.flatMap((r) => plainStrings(r.inputs)).some((s) => s === "KEY"));
  });

  it("exposure none: no Ingress, Gateway or TLS secret", async () => {
    const mocked = run();
    new KlutchBindBackend("b", backendArgs({ exposure: "none" }));
    await settle();
    for (const t of [
      "kubernetes:networking.k8s.io/v1:Ingress",
      "kubernetes:gateway.networking.k8s.io/v1:Gateway",
      "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute",
    ]) {
      assert.equal(mocked.ofType(t).length, 0, t);
    }
    assert.equal(mocked.ofType("kubernetes:core/v1:Secret").filter((s) => s.name === "b-tls").length, 0);
  });
});
