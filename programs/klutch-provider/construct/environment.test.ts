import { strict as assert } from "node:assert";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import {
  SECRET_SETTINGS,
  bind,
  controlPlaneCluster,
  crossplane,
  localClusters,
  oidc,
} from "../../../lib/config/schema";
import { appCluster, environmentSchema } from "../../../components/config/schema";
import { networkConnector } from "../../../network/registry";
import { KLUTCH_PACKAGE } from "../catalog";
import { environmentConfig } from "./environment";
import { KlutchProvider } from "../provider";
import { fakeLocalStateDir } from "../../../test/helpers/kubeconfig";
import { mockPulumi } from "../../../test/helpers/mocks";
import { finish, outputsOf } from "../../../test/helpers/provider";
import { keysOf } from "../../../test/helpers/schema-keys";

const shapeOf = (t: z.ZodTypeAny, key: string): z.ZodTypeAny => {
  let inner = t;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodDefault || inner instanceof z.ZodPrefault)
    inner = inner.unwrap() as z.ZodTypeAny;
  return (inner as z.ZodObject<z.ZodRawShape>).shape[key] as z.ZodTypeAny;
};
const props = (token: string) => Object.keys(KLUTCH_PACKAGE.types[token]!.properties).sort();

describe("klutch provider: Environment", function () {
  this.timeout(60000);

  it("its schema types are the config model's settings, one for one (fails when a setting is added to either)", () => {
    const env = KLUTCH_PACKAGE.components.find((c) => c.token === "klutch:index:Environment")!;
    assert.deepEqual(
      Object.keys(env.inputs).sort(),
      [...Object.keys(environmentSchema.shape), ...SECRET_SETTINGS, "projectDir"].sort(),
    );
    const pairs: [z.ZodTypeAny, string][] = [
      [controlPlaneCluster, "klutch:index:ControlPlane"],
      [appCluster, "klutch:index:AppCluster"],
      [shapeOf(controlPlaneCluster, "kubeconfig"), "klutch:index:KubeconfigSource"],
      [shapeOf(controlPlaneCluster, "network"), "klutch:index:ClusterNetwork"],
      [shapeOf(controlPlaneCluster, "aws"), "klutch:index:AwsCluster"],
      [shapeOf(shapeOf(controlPlaneCluster, "aws"), "nodeGroup"), "klutch:index:AwsNodeGroup"],
      [shapeOf(controlPlaneCluster, "openstack"), "klutch:index:OpenstackCluster"],
      [
        shapeOf(shapeOf(controlPlaneCluster, "openstack"), "existingNetwork"),
        "klutch:index:OpenstackExistingNetwork",
      ],
      [networkConnector, "klutch:index:NetworkConnector"],
      [oidc, "klutch:index:Oidc"],
      [localClusters, "klutch:index:LocalClusters"],
      [crossplane, "klutch:index:CrossplaneSettings"],
      [bind, "klutch:index:BindSettings"],
      [shapeOf(bind, "tls"), "klutch:index:BindTls"],
    ];
    for (const [schema, token] of pairs) assert.deepEqual(props(token), keysOf(schema), token);
  });

  it("the whole stack from one args object: clusters, Crossplane, bind, bindings; kubeconfigs secret outputs", async () => {
    const r = mockPulumi({});
    const stateDir = fakeLocalStateDir(["cp", "app-1"]);
    const made = await new KlutchProvider().construct(
      "dev",
      "klutch:index:Environment",
      {
        environment: "dev",
        controlPlane: { name: "cp", infrastructure: "local" },
        appClusters: [
          { name: "app-1", infrastructure: "local", networkConnector: { implementation: "noop" } },
        ],
        localClusters: { stateDir },
        bind: { exposure: "none" },
        projectDir: "/",
      },
      {},
    );
    const { values, secret } = await outputsOf(made.state);
    await finish();
    const types = new Set(r.resources.map((x) => x.type));
    for (const t of [
      "klutch:index:Environment",
      "klutch:cluster:LocalCluster",
      "klutch:crossplane:Crossplane",
      "klutch:bind:KlutchBindBackend",
      "klutch:bind:OidcProvider",
      "klutch:bind:ExportedApi",
      "klutch:bind:AppClusterBinding",
    ])
      assert.ok(types.has(t), t);
    assert.deepEqual(Object.keys(values.namespaces as object).sort(), ["app-1", "cp"]);
    assert.equal(values.bindExternalAddress, "https://bind.klutch.localhost");
    assert.ok((values.exportedApis as string[]).includes("postgresqlinstances.anynines.com"));
    assert.equal(
      (values.bindings as Record<string, { consumerNamespace: string }>)["app-1"]!.consumerNamespace,
      "cluster-app-1",
    );
    assert.ok(secret.has("controlPlaneKubeconfig"));
    assert.ok(secret.has("appClusterKubeconfigs"));
    assert.ok(!secret.has("bindings"));
  });

  it("refuses the stack's problems in one message named by input path, before anything is registered", async () => {
    const r = mockPulumi({});
    const stateDir = fakeLocalStateDir(["cp"]);
    await assert.rejects(
      new KlutchProvider().construct(
        "dev",
        "klutch:index:Environment",
        {
          environment: "dev",
          controlPlane: { name: "cp", infrastructure: "local" },
          appClusters: [
            { name: "cp", infrastructure: "existing", kubeconfig: { path: "/nonexistent/kubeconfig" } },
            {
              name: "app-2",
              infrastructure: "local",
              networkConnector: { implementation: "wireguard", floatingIp: true },
            },
          ],
          localClusters: { stateDir },
          bind: { replicas: 2 },
          oidc: { provider: "keycloak", issuerUrl: "https://kc.example.test", clientId: "bind" },
          bindCookieSigningKey: pulumi.secret("c2hvcnQ="),
          projectDir: "/",
        },
        {},
      ),
      (err: Error) => {
        assert.match(err.message, /^Environment dev: invalid arguments:/);
        assert.match(err.message, /appClusters\[0\]\.name: "cp" is already used/);
        assert.match(err.message, /appClusters\[0\]\.kubeconfig/);
        assert.match(err.message, /appClusters\[1\]\.networkConnector: unknown field "floatingIp"/);
        assert.match(err.message, /bind\.replicas: must be 1 \(got 2\)/);
        assert.match(err.message, /oidcClientSecret: is required for provider keycloak/);
        assert.match(err.message, /bindCookieSigningKey: must decode to 32 bytes/);
        assert.doesNotMatch(err.message, /c2hvcnQ/);
        return true;
      },
    );
    assert.deepEqual(r.resources, []);
  });

  it("runLocally takes Crossplane from the toolchain, or says what to do", () => {
    const stateDir = fakeLocalStateDir(["cp"]);
    const { problems } = environmentConfig(
      {
        environment: "dev",
        controlPlane: { name: "cp", infrastructure: "local" },
        localClusters: { stateDir },
        crossplane: { runLocally: true },
      },
      "/",
      () => [undefined, undefined],
    );
    assert.deepEqual(problems, [
      "crossplane.runLocally: KLUTCH_CROSSPLANE_CLUSTER_DIR is not set: run `bash host/scripts/toolchain.sh build` and use `npm run pulumi`",
    ]);
  });
});
