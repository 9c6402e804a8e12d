import { strict as assert } from "node:assert";
import * as pulumi from "@pulumi/pulumi";
import { backendProblems, bindingProblems, oidcProblems } from "./bind";
import { KlutchProvider } from "../provider";
import { randomKeyProvider } from "../../../providers/dynamic/random-key";
import { fakeKubeconfig } from "../../../test/helpers/kubeconfig";
import {
  type MockedRun,
  isSecretEnvelope,
  mockPulumi,
  plainStrings,
  valueOf,
} from "../../../test/helpers/mocks";
import { finish, outputsOf, recordDependencies } from "../../../test/helpers/provider";

const RANDOM_KEY = "pulumi-nodejs:dynamic/klutch:RandomKey";
const CP = fakeKubeconfig("cp", "https://cp.example.test:6443");
const APP = fakeKubeconfig("app", "https://app.example.test:6443");
const POSTGRES = {
  group: "anynines.com",
  version: "v1",
  resource: "postgresqlinstances",
  kind: "PostgresqlInstance",
};
const BINDINGS = {
  group: "anynines.com",
  version: "v1",
  resource: "servicebindings",
  kind: "ServiceBinding",
  permissionClaims: [{ group: "", resource: "secrets", owner: "Provider" }],
};

function run(): MockedRun {
  return mockPulumi({}, "test", { dynamicProviders: { [RANDOM_KEY]: randomKeyProvider } });
}

/** Resources of `run` as `Kind/name`, for those on the provider named. */
function on(r: MockedRun, provider: string): string[] {
  return r.resources
    .filter((x) => x.provider?.includes(`::${provider}::`))
    .map((x) => `${x.type.split(":").pop()}/${x.name}`)
    .sort();
}

describe("klutch provider: KlutchBindBackend", function () {
  this.timeout(30000);

  it("maps flat inputs onto the config model's bind settings; the OIDC secret and cookie keys stay secret", async () => {
    const r = run();
    const made = await new KlutchProvider().construct(
      "bind",
      "klutch:bind:KlutchBindBackend",
      {
        kubeconfig: pulumi.secret(CP),
        exportedApis: [POSTGRES, BINDINGS],
        externalAddress: "https://bind.example.test",
        exposure: "gateway",
        tlsSource: "cert-manager",
        tlsIssuer: "internal",
        tlsIssuerKind: "Issuer",
        oidcClientId: "klutch-bind",
        oidcClientSecret: pulumi.secret("the-oidc-secret"),
        dexServiceName: "dex",
        skipAwait: true,
      },
      {},
    );
    const { values } = await outputsOf(made.state);
    await finish();
    assert.equal(values.namespace, "bind");
    assert.equal(values.externalAddress, "https://bind.example.test");
    assert.ok((values.crdNames as string[]).includes("clusterbindings.klutch.anynines.com"));
    const objects = on(r, "bind-kubernetes");
    for (const o of [
      "Deployment/bind-deployment",
      "Secret/bind-secret",
      "Gateway/bind-gateway",
      "HTTPRoute/bind-route",
    ])
      assert.ok(objects.includes(o), `${o} in ${objects.join(", ")}`);
    const gateway = r.resources.find((x) => x.name === "bind-gateway")!;
    assert.deepEqual(gateway.inputs.metadata.annotations, { "cert-manager.io/issuer": "internal" });
    // Dex routed under /dex on the backend's host, since the issuer is derived.
    const route = r.resources.find((x) => x.name === "bind-route")!;
    assert.ok(JSON.stringify(route.inputs.spec.rules).includes('"/dex"'));
    // The konnectors' API address came out of the kubeconfig; flags point at it.
    const deployment = r.resources.find((x) => x.name === "bind-deployment")!;
    assert.ok(
      JSON.stringify(deployment.inputs.spec.template.spec.containers[0].args).includes(
        "https://cp.example.test:6443",
      ),
    );
    const secret = r.resources.find((x) => x.name === "bind-secret")!;
    assert.ok(isSecretEnvelope(secret.inputs.stringData));
    for (const x of r.resources)
      assert.ok(!plainStrings(x.inputs).some((s) => s.includes("the-oidc-secret")), x.name);
    assert.ok(
      !plainStrings(r.ofType("pulumi:providers:kubernetes")[0]!.inputs).some((s) =>
        s.includes("not-a-real-token"),
      ),
    );
  });

  it("refuses bad settings in one message naming each input, before anything is registered", async () => {
    const r = run();
    await assert.rejects(
      new KlutchProvider().construct(
        "bind",
        "klutch:bind:KlutchBindBackend",
        {
          kubeconfig: pulumi.secret(CP),
          exportedApis: [{ ...POSTGRES, version: "1" }],
          externalAddress: "http://bind.example.test",
          tlsSource: "provided",
          replicas: 2,
          consumerScope: "Cluster",
          cookieSigningKey: pulumi.secret(Buffer.alloc(64).toString("base64")),
          oidcClientId: "klutch-bind",
          oidcClientSecret: pulumi.secret("s"),
        },
        {},
      ),
      (err: Error) => {
        assert.match(err.message, /^KlutchBindBackend bind: invalid arguments:/);
        assert.match(err.message, /externalAddress: must use https:\/\//);
        assert.match(err.message, /replicas: must be 1 \(got 2\)/);
        // The only API given is malformed, so the reach names no resource.
        assert.match(
          err.message,
          /consumerScope: "Cluster" is refused: .* could get, list, create, update and delete every exported and claimed resource in every namespace/,
        );
        assert.match(err.message, /exportedApis\[0\]\.version: must be a Kubernetes API version/);
        assert.match(err.message, /cookieSigningKey: must decode to 32 bytes/);
        assert.match(err.message, /tlsCertificate is required when tlsSource is "provided"/);
        assert.match(err.message, /tlsKey is required/);
        assert.doesNotMatch(err.message, /AAAA/, "a secret's value is never echoed");
        return true;
      },
    );
    assert.deepEqual(r.resources, []);
  });

  it("an OIDC client secret not known yet (a preview, sent as an output value without a value) is no missing input", async () => {
    run();
    // What the engine sends for another resource's secret output still to come (rpc.ts).
    const later = pulumi.runtime.deserializeProperty({
      [pulumi.runtime.specialSigKey]: pulumi.runtime.specialOutputValueSig,
      secret: true,
    }) as pulumi.Output<string>;
    const made = await new KlutchProvider().construct(
      "bind",
      "klutch:bind:KlutchBindBackend",
      {
        kubeconfig: pulumi.secret(CP),
        exportedApis: [POSTGRES],
        oidcClientId: "klutch-bind",
        oidcClientSecret: later,
        skipAwait: true,
      },
      {},
    );
    assert.ok(made.urn);
    await finish();
  });

  it("names the tls input, not the config model's path", () => {
    const { problems } = backendProblems({
      kubeconfig: CP,
      exportedApis: [POSTGRES],
      tlsIssuerKind: "Cluster",
    });
    assert.deepEqual(problems, ['tlsIssuerKind: must be one of Issuer, ClusterIssuer (got "Cluster")']);
  });
});

describe("klutch provider: OidcProvider", function () {
  this.timeout(30000);

  it("dex: Dex on the control plane, the generated client secret a secret output", async () => {
    const r = run();
    const made = await new KlutchProvider().construct(
      "oidc",
      "klutch:bind:OidcProvider",
      {
        kubeconfig: pulumi.secret(CP),
        namespace: "bind",
        externalAddress: "https://bind.example.test",
        skipAwait: true,
      },
      {},
    );
    const { values, secret } = await outputsOf(made.state);
    await finish();
    assert.equal(values.issuerUrl, "https://bind.example.test/dex");
    assert.equal(values.callbackUrl, "https://bind.example.test/callback");
    assert.equal(values.clientId, "klutch-bind");
    assert.equal(values.serviceName, "dex");
    assert.equal(values.servicePort, 5556);
    assert.ok(secret.has("clientSecret"));
    assert.match(values.clientSecret as string, /^[0-9a-f]{64}$/);
    assert.deepEqual(on(r, "oidc-kubernetes"), [
      "Deployment/oidc-deployment",
      "PersistentVolumeClaim/oidc-data",
      "Secret/oidc-config",
      "Service/oidc-service",
      "ServiceAccount/oidc-account",
    ]);
  });

  it("keycloak: nothing on a cluster, the given client secret passed on as a secret", async () => {
    const r = run();
    const made = await new KlutchProvider().construct(
      "oidc",
      "klutch:bind:OidcProvider",
      {
        provider: "keycloak",
        issuerUrl: "https://kc.example.test/realms/klutch",
        clientId: "bind",
        clientSecret: pulumi.secret("kc-secret"),
      },
      {},
    );
    const { values, secret } = await outputsOf(made.state);
    await finish();
    assert.equal(values.issuerUrl, "https://kc.example.test/realms/klutch");
    assert.equal(values.clientSecret, "kc-secret");
    assert.ok(secret.has("clientSecret"));
    assert.equal(values.serviceName, undefined);
    assert.deepEqual(
      r.resources.map((x) => x.type),
      ["klutch:bind:OidcProvider"],
    );
  });

  it("refuses what each provider lacks, naming the inputs", () => {
    assert.deepEqual(oidcProblems({ provider: "keycloak", issuerUrl: "https://kc.example.test" }), {
      problems: [
        "clientId: is required (string)",
        "clientSecret is required for provider keycloak (the client's secret at Keycloak)",
      ],
      oidc: undefined,
      externalAddress: "https://bind.klutch.localhost",
    });
    const dex = oidcProblems({ storageSize: "1GB" }).problems;
    assert.ok(
      dex.some((p) => /^storageSize: .*1Gi.*"1GB"/.test(p)),
      dex.join("\n"),
    );
    assert.ok(dex.includes("kubeconfig is required for provider dex (the control plane, where Dex runs)"));
    assert.ok(dex.some((p) => p.startsWith("namespace is required")));
  });
});

describe("klutch provider: AppClusterBinding", function () {
  this.timeout(30000);

  it("control plane and app cluster objects on their own providers; the binder kubeconfig a secret output", async () => {
    const r = run();
    const made = await new KlutchProvider().construct(
      "app-1",
      "klutch:bind:AppClusterBinding",
      {
        appCluster: "app-1",
        controlPlaneKubeconfig: pulumi.secret(CP),
        appClusterKubeconfig: pulumi.secret(APP),
        apis: [POSTGRES, BINDINGS],
        skipAwait: true,
      },
      {},
    );
    const { values, secret } = await outputsOf(made.state);
    await finish();
    assert.equal(values.consumerNamespace, "cluster-app-1");
    assert.deepEqual(values.boundApis, ["postgresqlinstances.anynines.com", "servicebindings.anynines.com"]);
    assert.ok(secret.has("kubeconfig"));
    assert.match(values.kubeconfig as string, /server: https:\/\/cp\.example\.test:6443/);
    const cp = on(r, "app-1-control-plane-kubernetes");
    assert.ok(cp.includes("ClusterBinding/app-1-cluster-binding"), cp.join(", "));
    const app = on(r, "app-1-app-cluster-kubernetes");
    assert.ok(app.includes("Deployment/app-1-konnector"), app.join(", "));
    assert.ok(app.includes("APIServiceBinding/app-1-binding-postgresqlinstances"));
    // skipAwait: the export requests do not wait for a backend that cannot run.
    for (const x of r.resources.filter((x) => x.type.endsWith("ExportRequest")))
      assert.equal(x.inputs.awaitExport, false);
    for (const x of r.ofType("pulumi:providers:kubernetes"))
      assert.ok(!plainStrings(x.inputs).some((s) => s.includes("not-a-real-token")), x.name);
  });

  it("the program's dependsOn reaches every object under the component", async () => {
    const r = run();
    const deps = recordDependencies();
    class Crds extends pulumi.CustomResource {
      constructor() {
        super("test:index:Crds", "crds", {});
      }
    }
    const crds = new Crds();
    await new KlutchProvider().construct(
      "app-1",
      "klutch:bind:AppClusterBinding",
      {
        appCluster: "app-1",
        controlPlaneKubeconfig: pulumi.secret(CP),
        appClusterKubeconfig: pulumi.secret(APP),
        apis: [POSTGRES],
        skipAwait: true,
      },
      { dependsOn: [crds] },
    );
    await finish();
    const crdsUrn: string = await valueOf(crds.urn);
    const children = r.resources.filter(
      (x) => x.type.startsWith("kubernetes:") || x.type.endsWith("ExportRequest"),
    );
    assert.ok(children.length > 10, `${children.length} children`);
    for (const child of children)
      assert.ok(
        deps.get(child.name)?.includes(crdsUrn),
        `${child.name} does not wait for the program's dependsOn`,
      );
  });

  it("refuses a bad name, a consumer namespace too long and a bad API in one message", () => {
    const { problems } = bindingProblems({
      appCluster: "App_1",
      namespacePrefix: "x".repeat(60),
      controlPlaneKubeconfig: CP,
      apis: [{ ...POSTGRES, resource: "PGs" }],
      controlPlaneAddress: "http://cp",
    });
    assert.ok(
      problems.some((p) => p.startsWith('appCluster "App_1"')),
      problems.join("\n"),
    );
    assert.ok(problems.some((p) => /consumer namespace .* at most 63/.test(p)));
    assert.ok(
      problems.some((p) => p.startsWith("apis[0].resource: must be a plural lowercase resource name")),
    );
    assert.ok(problems.some((p) => p.startsWith("controlPlaneAddress: must be an https URL")));
    assert.deepEqual(
      bindingProblems({ appCluster: "a", controlPlaneKubeconfig: "{}", apis: [POSTGRES] }).problems,
      [
        "controlPlaneKubeconfig: kubeconfig has no context (none selected); pass a kubeconfig whose current context names a cluster with a server",
      ],
    );
  });
});
