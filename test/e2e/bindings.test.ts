import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import type { EngineEvent, Stack } from "@pulumi/pulumi/automation";
import { stringify } from "yaml";
import { boundApis } from "../../lib/bind/app-cluster-plan";
import { CONTRACT, clusterWideGrants, contractAt, type ConsumerScope } from "../../lib/bind/contract";
import { IDENTITY_ANNOTATION, bindingIdentity, clusterId } from "../../lib/bind/app-cluster-plan";
import { bindingCrdFor } from "../../lib/bind/crds";
import type { PolicyRule } from "../../lib/bind/rbac";
import { DEFAULT_BIND_RELEASE } from "../../lib/bind/upstream/release";
import { environmentSchema } from "../../components/config/schema";
import { LocalClusters } from "../../host/local-clusters";
import { selectStack } from "../../programs/stack/program-stack";
import { NODE_TYPESCRIPT_ARGS, repoRoot } from "../../host/automation/toolchain";
import { RawClient, Replayer, type Refusal, type ReplayWorld } from "../helpers/contract-replay";
import { kubectl, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";
import { settled } from "../helpers/settled";
import { setFileEnv } from "../helpers/file-env";

const STACK = "bindings-e2e";
const CP = "control-plane";
const CNS = "cluster-app-1";
const CONSUMER_NS = "team-a";
/** The OIDC subject that binds app-1 interactively (a Dex subject's shape). */
const SUBJECT = "CiQwOGE4Njg0Yi1kYjg4LTRiNzMtOTBhOS0zY2QxNjYxZjU0NjYSBWxvY2Fs";

/** The stack's config: app clusters with different bound APIs (app-2 binds no claiming API). */
function stackConfig(stateDir: string, apps: string[]) {
  return {
    config: {
      "klutch:environment": "bindings",
      "klutch:controlPlane": { name: CP, infrastructure: "local" },
      "klutch:appClusters": apps.map((name) => ({
        name,
        infrastructure: "local",
        ...(name === "app-2" ? { apis: ["postgresqlinstances"] } : {}),
        ...(name === "app-1" ? { bindSubject: SUBJECT } : {}),
      })),
      "klutch:localClusters": { stateDir },
      "klutch:crossplane": { runLocally: true },
    },
  };
}

const exported = environmentSchema.parse({
  environment: "x",
  controlPlane: { name: CP, infrastructure: "local" },
}).exportedApis;

/** A data-service CRD as the dataservices package installs it (status subresource included). */
function dataServiceCrd(api: (typeof exported)[number]) {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${api.resource}.${api.group}` },
    spec: {
      group: api.group,
      scope: "Namespaced",
      names: { kind: api.kind, plural: api.resource, singular: api.kind!.toLowerCase() },
      versions: [
        {
          name: api.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}

/**
 * The klutch-bind contract, conformed to for real: `pulumi up` on local API servers, then every
 * row of lib/bind/contract.ts replayed as real requests with the credentials upstream's
 * programs would hold (the backend's ServiceAccount, the klutch-binder kubeconfig pulumi made,
 * the konnector's ServiceAccount). The backend's and konnector's images cannot run here, so
 * this test plays their controllers from the same table.
 */
describe("klutch-bind contract on real clusters (e2e)", function () {
  this.timeout(20 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-bindings-"));
  const stateDir = path.join(work, "clusters");
  const stackFile = path.join(repoRoot, "stacks", `Pulumi.${STACK}.yaml`);
  let restoreEnv = () => {};
  let clusters: LocalClusters;
  let stack: Stack;
  const kubeconfigs: Record<string, string> = {};
  const clients: Record<"backend" | "binder" | "konnector" | "cpAdmin" | "appAdmin", RawClient> = {} as never;
  let replayer: Replayer;
  let world: ReplayWorld;
  const apis = boundApis({}, exported);

  const writeConfig = (apps: string[]) => fs.writeFileSync(stackFile, stringify(stackConfig(stateDir, apps)));
  const cp = () => clusters.kubeconfigPath(CP);
  const app1 = () => clusters.kubeconfigPath("app-1");
  const rowsOf = (actor: string, cluster: string, scope: ConsumerScope = "Namespaced") =>
    contractAt(scope).filter((r) => r.actor === actor && r.cluster === cluster);

  /** A kubeconfig holding a ServiceAccount's token, for the cluster of an admin kubeconfig. */
  function tokenKubeconfig(adminPath: string, namespace: string, account: string): string {
    const token = kubectl(adminPath, ["-n", namespace, "create", "token", account, "--duration=2h"]).trim();
    const admin = new KubeConfig();
    admin.loadFromFile(adminPath);
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ ...admin.getCurrentCluster()!, name: "c" }],
      users: [{ name: account, token }],
      contexts: [{ name: "c", cluster: "c", user: account }],
      currentContext: "c",
    });
    return kc.exportConfig();
  }

  before(async () => {
    restoreEnv = setFileEnv({
      KLUTCH_LOCAL_DIR: stateDir,
      PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`,
      PULUMI_CONFIG_PASSPHRASE: "bindings-e2e-only",
    });
    clusters = new LocalClusters(stateDir);
    await clusters.up([CP, "app-1", "app-2", "app-3"]);
    writeConfig(["app-1", "app-2"]);
    stack = await selectStack({ stack: STACK });
  });

  after(async () => {
    try {
      if (stack) {
        await stack.destroy().catch(() => undefined);
        await stack.workspace.removeStack(STACK).catch(() => undefined);
      }
      if (clusters) await clusters.down();
    } finally {
      restoreEnv();
      fs.rmSync(stackFile, { force: true });
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it("`pulumi up` binds two app clusters the way /bind and `kubectl bind` do, with upstream's names", async () => {
    const res = await stack.up();
    assert.equal(res.summary.result, "succeeded");
    const out = res.outputs.appClusterKubeconfigs;
    assert.equal(out?.secret, true, "kubeconfigs are a secret output");
    for (const [app, text] of Object.entries(out?.value as Record<string, string>)) {
      kubeconfigs[app] = text;
    }
    assert.deepEqual(Object.keys(kubeconfigs).sort(), ["app-1", "app-2"]);
    for (const api of exported)
      assert.equal(kubectlApply(cp(), JSON.stringify(dataServiceCrd(api))).status, 0);

    // Control plane: what /bind makes, and one request per API (created once).
    for (const [kind, name] of [
      ["serviceaccount", "klutch-binder"],
      ["secret", "klutch-binder"],
      ["secret", "kubeconfig"],
      ["clusterbinding", "cluster"],
    ]) {
      kubectl(cp(), ["-n", CNS, "get", kind!, name!]);
    }
    const requests = kubectl(cp(), ["-n", CNS, "get", "apiserviceexportrequests", "-o", "name"])
      .trim()
      .split("\n");
    assert.equal(requests.length, 4);
    // No RBAC of ours on the control plane for the binding: the backend's controllers bind klutch-binder.
    assert.equal(kubectlTry(cp(), ["-n", CNS, "get", "rolebinding", "klutch-binder"]).status, 1);
    // App cluster: the konnector, its RBAC, the binding CRD (cluster-scoped) and cluster-scoped bindings.
    kubectl(app1(), ["-n", "klutch-bind", "get", "deployment", "konnector"]);
    kubectl(app1(), ["get", "clusterrole", "klutch-bind-konnector"]);
    const crd = kubectlJson(app1(), ["get", "crd", "apiservicebindings.klutch.anynines.com"]);
    assert.equal(crd.spec.scope, "Cluster");
    const bindings = kubectl(app1(), ["get", "apiservicebindings", "-o", "name"]).trim().split("\n");
    assert.equal(bindings.length, 4);

    clients.cpAdmin = new RawClient(fs.readFileSync(cp(), "utf8"));
    clients.appAdmin = new RawClient(fs.readFileSync(app1(), "utf8"));
    clients.binder = new RawClient(kubeconfigs["app-1"]!);
    clients.backend = new RawClient(tokenKubeconfig(cp(), "bind", "klutch-bind-backend"));
    clients.konnector = new RawClient(tokenKubeconfig(app1(), "klutch-bind", "konnector"));
    world = {
      clusterNamespace: CNS,
      serviceNamespace: `${CNS}-${CONSUMER_NS}`,
      consumerNamespace: CONSUMER_NS,
      konnectorNamespace: "klutch-bind",
      apis,
      bindingCrd: bindingCrdFor(DEFAULT_BIND_RELEASE),
    };
    replayer = new Replayer(clients.cpAdmin, world);
  });

  it("every backend call succeeds with the backend's own ServiceAccount, building what its controllers build", async () => {
    const refusals = await replayer.replay(clients.backend, rowsOf("backend", "control-plane"));
    assert.deepEqual(refusals, []);
    // The calls refused on purpose: upstream's Namespaced backend re-creates ClusterRoleBinding
    // klutch-binder-<cns> (row B6), which would bind the binding's role cluster-wide.
    assert.deepEqual(await replayer.replayRefused(clients.backend, rowsOf("backend", "control-plane")), []);
    assert.equal(
      (
        await clients.cpAdmin.request(
          "GET",
          `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/klutch-binder-${CNS}`,
        )
      ).status,
      404,
      "no cluster-wide binding was made",
    );
    // The rest of what the backend's controllers do for this binding, as the backend.
    const b = clients.backend;
    const ns = `${CNS}-${CONSUMER_NS}`;
    const ok = (r: { status: number; body: string }, what: string) =>
      assert.ok(r.status < 300 || r.status === 409, `${what}: ${r.status} ${r.body}`);
    ok(
      await b.request("POST", "/api/v1/namespaces", {
        metadata: {
          name: ns,
          annotations: { "klutch.anynines.com/api-service-namespace": `${CNS}/${CONSUMER_NS}` },
        },
      }),
      "service namespace",
    );
    ok(
      await b.request(
        "POST",
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`,
        replayer.body("rbac.authorization.k8s.io", "rolebindings", "klutch-binder", ns),
      ),
      "RoleBinding in the service namespace",
    );
    for (const api of apis) {
      const name = `${api.resource}.${api.group}`;
      ok(
        await b.request("POST", replayer.path("klutch.anynines.com", "apiserviceexports", CNS), {
          ...replayer.body("klutch.anynines.com", "apiserviceexports", name, CNS),
          spec: {
            ...(replayer.body("klutch.anynines.com", "apiserviceexports", name, CNS).spec as object),
            names: dataServiceCrd(api).spec.names,
          },
        }),
        `export ${name}`,
      );
      ok(
        await b.request(
          "PATCH",
          replayer.path("klutch.anynines.com", "apiserviceexportrequests/status", CNS, name),
          { status: { phase: "Succeeded" } },
          "application/merge-patch+json",
        ),
        "request Succeeded",
      );
      // The first reconcile after the request is 10 minutes old deletes it (row B15).
      ok(
        await b.request(
          "DELETE",
          replayer.path("klutch.anynines.com", "apiserviceexportrequests", CNS, name),
        ),
        "request deleted",
      );
    }
  });

  it("every konnector call on the control plane succeeds with the klutch-binder kubeconfig pulumi made", async () => {
    assert.deepEqual(await replayer.replay(clients.binder, rowsOf("konnector", "control-plane")), []);
  });

  it("every konnector call on the app cluster succeeds with the konnector's ServiceAccount", async () => {
    kubectl(app1(), ["create", "namespace", CONSUMER_NS]);
    // The bound CRDs, as the konnector makes them from the exports.
    for (const api of apis) assert.equal(kubectlApply(app1(), JSON.stringify(dataServiceCrd(api))).status, 0);
    const appReplayer = new Replayer(clients.appAdmin, world);
    assert.deepEqual(await appReplayer.replay(clients.konnector, rowsOf("konnector", "app")), []);
  });

  it("and no more: other bindings' namespaces, unclaimed places and cluster-wide writes are refused", async () => {
    const status = async (c: RawClient, method: string, p: string, body?: unknown) =>
      (await c.request(method, p, body)).status;
    const binder = clients.binder;
    assert.equal(
      await status(binder, "GET", "/apis/anynines.com/v1/namespaces/cluster-app-2/postgresqlinstances"),
      403,
    );
    assert.equal(await status(binder, "GET", "/api/v1/namespaces/kube-system/secrets"), 403);
    assert.equal(await status(binder, "GET", "/api/v1/namespaces/bind/secrets"), 403);
    assert.equal(await status(binder, "POST", "/api/v1/namespaces", { metadata: { name: "sneaky" } }), 403);
    assert.equal(await status(binder, "GET", "/api/v1/namespaces/cluster-app-2"), 403);
    const konnector = clients.konnector;
    assert.equal(await status(konnector, "GET", "/api/v1/pods"), 403);
    assert.equal(
      await status(
        konnector,
        "DELETE",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/apiservicebindings.klutch.anynines.com",
      ),
      403,
    );
    assert.equal(
      await status(konnector, "POST", `/api/v1/namespaces/${CONSUMER_NS}/serviceaccounts`, {
        metadata: { name: "x" },
      }),
      403,
    );
    const backend = clients.backend;
    assert.equal(await status(backend, "GET", "/api/v1/pods"), 403);
    assert.equal(
      await status(backend, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        metadata: { name: "escalate" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
        subjects: [{ kind: "ServiceAccount", name: "klutch-binder", namespace: CNS }],
      }),
      403,
    );
  });

  it("the backend's /bind lookup (namespaces by identity annotation) finds the namespace pulumi made for app-1", async () => {
    // kubectl bind's cluster ID: from the app cluster's klutch-bind namespace (plugin/bind.go).
    const appNs = JSON.parse(
      (await clients.appAdmin.request("GET", "/api/v1/namespaces/klutch-bind")).body,
    ) as {
      metadata: { uid: string };
    };
    const identity = bindingIdentity(SUBJECT, clusterId(appNs.metadata.uid));
    // The backend's namespace informer, as its own ServiceAccount, indexed by the annotation
    // (kubernetes/indexers.go IndexNamespacesByIdentity; manager.go HandleResources).
    const list = await clients.backend.request("GET", "/api/v1/namespaces");
    assert.equal(list.status, 200, list.body);
    const items = (
      JSON.parse(list.body) as {
        items: { metadata: { name: string; annotations?: Record<string, string> } }[];
      }
    ).items;
    const found = items.filter((n) => n.metadata.annotations?.[IDENTITY_ANNOTATION] === identity);
    assert.deepEqual(
      found.map((n) => n.metadata.name),
      [CNS],
      "exactly one namespace: HandleResources fails on several and makes a new one on none",
    );
    const app2 = items.find((n) => n.metadata.name === "cluster-app-2");
    assert.equal(app2?.metadata.annotations?.[IDENTITY_ANNOTATION], undefined, "app-2 names no subject");
  });

  it("Cluster scope, bound as upstream's backend binds it, opens what validation refuses it for", async () => {
    const crb = `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/klutch-binder-${CNS}`;
    const serviceRb = `/apis/rbac.authorization.k8s.io/v1/namespaces/${CNS}-${CONSUMER_NS}/rolebindings/klutch-binder`;
    const savedRb = JSON.parse((await clients.cpAdmin.request("GET", serviceRb)).body) as Record<
      string,
      unknown
    >;
    const wide = clusterWideGrants("Cluster", apis);
    // What each grant opens beyond the binding's own namespaces: the backend's namespace and another binding's.
    const probes = wide.flatMap((rule) =>
      rule.resources.flatMap((res) =>
        ["bind", "cluster-app-2"].map((ns) => replayer.path(rule.apiGroups[0]!, res, ns)),
      ),
    );
    const statuses = async () =>
      Promise.all(probes.map(async (p) => `${(await clients.binder.request("GET", p)).status} ${p}`));
    assert.ok(
      probes.some((p) => p.endsWith("/namespaces/bind/secrets")),
      "the claimed secrets are among them",
    );
    for (const s of await statuses()) assert.match(s, /^403 /, "Namespaced: refused");
    // ensureRBACClusterRoleBinding at Cluster scope, and no RoleBinding in the service namespace.
    const made = await clients.cpAdmin.request(
      "POST",
      "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
      replayer.body("rbac.authorization.k8s.io", "clusterrolebindings", `klutch-binder-${CNS}`),
    );
    assert.ok(made.status < 300, made.body);
    await clients.cpAdmin.request("DELETE", serviceRb);
    try {
      // Reading and writing every other namespace's bound and claimed objects...
      const open = await settled(statuses, (now) => now.every((s) => s.startsWith("200 ")));
      assert.deepEqual(
        open.filter((s) => !s.startsWith("200 ")),
        [],
      );
      // ...and the Cluster scope's konnector rows all pass with upstream's binding.
      assert.deepEqual(
        await replayer.replay(clients.binder, rowsOf("konnector", "control-plane", "Cluster")),
        [],
      );
    } finally {
      await clients.cpAdmin.request("DELETE", crb);
      const { metadata, ...rest } = savedRb as { metadata: { name: string; namespace: string } };
      await clients.cpAdmin.request(
        "POST",
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${CNS}-${CONSUMER_NS}/rolebindings`,
        { ...rest, metadata: { name: metadata.name, namespace: metadata.namespace } },
      );
    }
    const closed = await settled(statuses, (now) => now.every((s) => s.startsWith("403 ")));
    assert.deepEqual(
      closed.filter((s) => !s.startsWith("403 ")),
      [],
      "Namespaced again",
    );
    const back = await settled(
      () => replayer.replay(clients.binder, rowsOf("konnector", "control-plane")),
      (refusals) => refusals.length === 0,
    );
    assert.deepEqual(back, []);
  });

  it("removing any one rule of the generated RBAC makes a replayed request fail", async () => {
    const cases: {
      role: string;
      path: string;
      client: RawClient;
      admin: RawClient;
      rows: typeof CONTRACT;
      replay: Replayer;
    }[] = [
      {
        role: "konnector ClusterRole",
        path: "/apis/rbac.authorization.k8s.io/v1/clusterroles/klutch-bind-konnector",
        client: clients.konnector,
        admin: clients.appAdmin,
        rows: rowsOf("konnector", "app"),
        replay: new Replayer(clients.appAdmin, world),
      },
      {
        role: "konnector Role",
        path: "/apis/rbac.authorization.k8s.io/v1/namespaces/klutch-bind/roles/klutch-bind-konnector",
        client: clients.konnector,
        admin: clients.appAdmin,
        rows: rowsOf("konnector", "app"),
        replay: new Replayer(clients.appAdmin, world),
      },
      {
        role: "backend ClusterRole",
        path: "/apis/rbac.authorization.k8s.io/v1/clusterroles/klutch-bind-backend",
        client: clients.backend,
        admin: clients.cpAdmin,
        rows: rowsOf("backend", "control-plane"),
        replay: replayer,
      },
    ];
    const report: string[] = [];
    // The API server's RBAC cache catches up with each edit within a few 100 ms.
    const until = (want: "refused" | "clean", c: (typeof cases)[number]): Promise<Refusal[]> =>
      settled(
        () => c.replay.replay(c.client, c.rows),
        (refusals) => (want === "refused") === refusals.length > 0,
        21,
      );
    for (const c of cases) {
      const role = JSON.parse((await c.admin.request("GET", c.path)).body) as { rules: PolicyRule[] };
      const rules = role.rules;
      for (let i = 0; i < rules.length; i++) {
        const current = JSON.parse((await c.admin.request("GET", c.path)).body) as Record<string, unknown>;
        await c.admin.request("PUT", c.path, { ...current, rules: rules.filter((_, j) => j !== i) });
        const refusals = await until("refused", c);
        const latest = JSON.parse((await c.admin.request("GET", c.path)).body) as Record<string, unknown>;
        await c.admin.request("PUT", c.path, { ...latest, rules });
        const rule = rules[i]!;
        const what = `${c.role} rule ${i} ${rule.apiGroups.join(",") || "core"}/${rule.resources.join(",")}${rule.resourceNames ? `[${rule.resourceNames.join(",")}]` : ""} ${rule.verbs.join(",")}`;
        assert.ok(refusals.length > 0, `${what}: nothing failed without it, so it is not needed`);
        report.push(`${what} → refused ${refusals[0]!.row} ${refusals[0]!.verb} ${refusals[0]!.path}`);
        assert.deepEqual(await until("clean", c), [], `${c.role}: restoring rule ${i} heals`);
      }
    }
    console.log(`      removal trials (${report.length}):\n${report.map((l) => `        ${l}`).join("\n")}`);
  });

  /**
   * Entries of a preview that touch no cluster: the stack resource (its outputs list the
   * bindings) and the dynamic-provider host's default provider, which the engine re-diffs
   * whenever the program's set of registrations changes.
   */
  const isBookkeeping = (urn: string) =>
    urn.endsWith("pulumi:pulumi:Stack::klutch-bindings-e2e") ||
    urn.endsWith("pulumi:providers:pulumi-nodejs::default");

  async function previewChanges(): Promise<[string, string][]> {
    const changes: [string, string][] = [];
    await stack.preview({
      onEvent: (e: EngineEvent) => {
        const m = e.resourcePreEvent?.metadata;
        if (m && m.op !== "same") changes.push([m.op, m.urn]);
      },
    });
    return changes;
  }

  it("a second up changes nothing after the backend deleted the requests and the konnector rewrote its CRD and Secret", async () => {
    // The konnector's bootstrap PUTs its own copy of the binding CRD (no labels, controller-gen's annotation).
    const live = kubectlJson(app1(), ["get", "crd", "apiservicebindings.klutch.anynines.com"]);
    const own = bindingCrdFor(DEFAULT_BIND_RELEASE);
    const put = {
      ...own,
      metadata: {
        name: own.metadata.name,
        resourceVersion: live.metadata.resourceVersion,
        annotations: { "controller-gen.kubebuilder.io/version": "v0.10.0" },
      },
    };
    const r = await clients.appAdmin.request(
      "PUT",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/apiservicebindings.klutch.anynines.com",
      put,
    );
    assert.ok(r.status < 300, r.body);
    // ensureConsumerSecret copies the provider's Secret kubeconfig over the app cluster's.
    const provider = kubectlJson(cp(), ["-n", CNS, "get", "secret", "kubeconfig"]);
    const consumer = kubectlJson(app1(), ["-n", "klutch-bind", "get", "secret", "kubeconfig"]);
    const copy = await clients.konnector.request("PUT", "/api/v1/namespaces/klutch-bind/secrets/kubeconfig", {
      ...consumer,
      data: provider.data,
      type: provider.type,
    });
    assert.ok(copy.status < 300, copy.body);
    const left = kubectlTry(cp(), ["-n", CNS, "get", "apiserviceexportrequests", "-o", "name"]).stdout;
    assert.equal(left.trim(), "", "the backend deleted every request (and the replays left no fixture)");

    const changes = (await previewChanges()).filter(([, urn]) => !isBookkeeping(urn));
    assert.deepEqual(changes, []);
    await stack.refresh();
    assert.deepEqual(
      (await previewChanges()).filter(([, urn]) => !isBookkeeping(urn)),
      [],
      "not after a refresh either",
    );
  });

  it("adding a third app cluster creates only its resources; removing it deletes only those", async () => {
    writeConfig(["app-1", "app-2", "app-3"]);
    // Environment-wide, updated with every app cluster: the bridge's settings, and the teardown
    // drain, which holds every app cluster's kubeconfig (it deletes consumer objects there).
    const isSettings = (urn: string) =>
      /kubernetes:core\/v1:ConfigMap::[^:]*-bridge-settings-configmap$/.test(urn) ||
      /pulumi-nodejs:dynamic\/klutch:TeardownDrain::/.test(urn);
    const adds = await previewChanges();
    for (const [op, urn] of adds) {
      if (isBookkeeping(urn) || isSettings(urn)) continue;
      assert.equal(op, "create", `${op} ${urn}`);
      assert.match(urn, /app-3/, `only app-3's resources change: ${op} ${urn}`);
    }
    // Applied through `npm run pulumi`, as an operator would. Its refusal without --yes and without
    // a terminal is local-stack.test.ts's (for up and destroy): the same gate, and a preview of
    // this change (about 30 s) would run twice.
    const cli = (args: string[]) =>
      spawnSync(
        process.execPath,
        [...NODE_TYPESCRIPT_ARGS, "programs/commands/pulumi.ts", "--stack", STACK, ...args],
        {
          cwd: repoRoot,
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
          timeout: 10 * 60_000,
        },
      );
    assert.notEqual(
      kubectlTry(clusters.kubeconfigPath("app-3"), ["-n", "klutch-bind", "get", "deployment", "konnector"])
        .status,
      0,
      "nothing was applied by the preview",
    );
    const applied = cli(["up", "--yes"]);
    assert.equal(applied.status, 0, applied.stderr);
    assert.match(applied.stdout, /update succeeded/);
    kubectl(clusters.kubeconfigPath("app-3"), ["-n", "klutch-bind", "get", "deployment", "konnector"]);
    const masked = cli(["outputs"]);
    assert.match(masked.stdout, /"appClusterKubeconfigs": "\[secret\]"/);
    const shown = cli(["outputs", "--show-secrets"]);
    assert.match(shown.stdout, /"app-3": "apiVersion: v1/);
    assert.equal(cli(["config", "get", "klutch:environment"]).stdout.trim(), "bindings");
    writeConfig(["app-1", "app-2"]);
    const removes = await previewChanges();
    for (const [op, urn] of removes) {
      if (isBookkeeping(urn) || isSettings(urn)) continue;
      assert.equal(op, "delete", `${op} ${urn}`);
      assert.match(urn, /app-3/);
    }
    assert.equal((await stack.up()).summary.result, "succeeded");
    // app-1's binding still works.
    assert.deepEqual(await replayer.replay(clients.binder, rowsOf("konnector", "control-plane")), []);
  });
});
