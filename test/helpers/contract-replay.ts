import * as https from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { binderNamespaceRules, binderRules, type ContractRow, type Verb } from "../../lib/bind/contract";
import { concreteCalls, crdName, type ConcreteCall } from "../../lib/bind/rbac";
import type { ExportedApiConfig } from "../../lib/config/schema";

/**
 * Replays rows of the klutch-bind contract table (lib/bind/contract.ts) as real requests
 * against a real API server, with the credentials of the identity that makes them upstream:
 * create, get, list, watch, update, patch and delete, on the main resource or its status.
 * A 403 is a refusal; anything else that passed authorization counts (a 409 on a create of a
 * named object that exists already still passed RBAC, which runs first).
 */

export interface Response {
  status: number;
  body: string;
}

/** Raw requests with a kubeconfig's credentials; the client library's KubeConfig does auth and TLS. */
export class RawClient {
  private readonly kc = new KubeConfig();
  constructor(kubeconfigText: string) {
    this.kc.loadFromString(kubeconfigText);
  }

  /**
   * One request; a 429 (the API server says so while a new CRD's storage initializes, with
   * Retry-After) is retried as client-go does.
   */
  async request(
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
  ): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const r = await this.once(method, path, body, contentType);
      if (r.status !== 429 || attempt >= 20) return r;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  private async once(method: string, path: string, body: unknown, contentType: string): Promise<Response> {
    const server = new URL(this.kc.getCurrentCluster()!.server);
    const opts: https.RequestOptions = {
      method,
      hostname: server.hostname,
      port: server.port,
      path,
      headers: body === undefined ? {} : { "content-type": contentType },
    };
    await this.kc.applyToHTTPSOptions(opts);
    const watch = /[?&]watch=true/.test(path);
    return new Promise((resolve, reject) => {
      const req = https.request(opts, (res) => {
        if (watch && res.statusCode === 200) {
          // A watch that was authorized streams; the status line is the answer.
          resolve({ status: 200, body: "" });
          req.destroy();
          return;
        }
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on("error", (e) => (watch ? undefined : reject(e)));
      if (body !== undefined) req.write(JSON.stringify(body));
      req.end();
    });
  }
}

/** Where a replay lands: the names the backend and konnector would use for one binding. */
export interface ReplayWorld {
  /** The binding's namespace on the control plane (<cns>). */
  clusterNamespace: string;
  /** <cns>-<ns>, made by the backend for consumer namespace <ns>. */
  serviceNamespace: string;
  /** A consumer namespace on the app cluster. */
  consumerNamespace: string;
  konnectorNamespace: string;
  apis: ExportedApiConfig[];
  /** The APIServiceBinding CRD body a konnector would write. */
  bindingCrd: unknown;
}

export interface Refusal {
  row: string;
  verb: string;
  path: string;
  status: number;
  message: string;
}

const VERSIONS: Record<string, string> = {
  "": "v1",
  "coordination.k8s.io": "v1",
  "rbac.authorization.k8s.io": "v1",
  "apiextensions.k8s.io": "v1",
  "klutch.anynines.com": "v1alpha1",
  "example-backend.klutch.anynines.com": "v1alpha1",
};
const CLUSTER_SCOPED = new Set([
  "namespaces",
  "clusterroles",
  "clusterrolebindings",
  "customresourcedefinitions",
  "apiservicebindings",
]);
const KINDS: Record<string, string> = {
  namespaces: "Namespace",
  secrets: "Secret",
  configmaps: "ConfigMap",
  serviceaccounts: "ServiceAccount",
  leases: "Lease",
  roles: "Role",
  rolebindings: "RoleBinding",
  clusterroles: "ClusterRole",
  clusterrolebindings: "ClusterRoleBinding",
  customresourcedefinitions: "CustomResourceDefinition",
  apiservicenamespaces: "APIServiceNamespace",
  apiserviceexportrequests: "APIServiceExportRequest",
  apiserviceexports: "APIServiceExport",
  clusterbindings: "ClusterBinding",
  apiservicebindings: "APIServiceBinding",
};

let serial = 0;

export class Replayer {
  constructor(
    private readonly admin: RawClient,
    private readonly world: ReplayWorld,
  ) {}

  private version(group: string): string {
    return VERSIONS[group] ?? this.world.apis.find((a) => a.group === group)?.version ?? "v1";
  }

  private kind(resource: string): string {
    return KINDS[resource] ?? this.world.apis.find((a) => a.resource === resource)?.kind ?? "Unknown";
  }

  /** Namespace of an object call (undefined for cluster-scoped resources). */
  private namespaceOf(row: ContractRow, resource: string): string | undefined {
    if (CLUSTER_SCOPED.has(resource) || row.namespace === "cluster") return undefined;
    switch (row.namespace) {
      case "konnector":
        return this.world.konnectorNamespace;
      case "cluster-namespace":
        return this.world.clusterNamespace;
      case "service-namespace":
        return this.world.serviceNamespace;
      default:
        return row.cluster === "app" ? this.world.consumerNamespace : this.world.clusterNamespace;
    }
  }

  path(group: string, resource: string, ns?: string, name?: string, query = ""): string {
    const [plural, sub] = resource.split("/");
    const base = group ? `/apis/${group}/${this.version(group)}` : "/api/v1";
    return `${base}${ns ? `/namespaces/${ns}` : ""}/${plural}${name ? `/${name}` : ""}${sub ? `/${sub}` : ""}${query}`;
  }

  /** A body for creating `name`, shaped like the object the real program makes. */
  body(group: string, plural: string, name: string, ns?: string): Record<string, unknown> {
    const w = this.world;
    const metadata = { name, ...(ns ? { namespace: ns } : {}) };
    const head = {
      apiVersion: group ? `${group}/${this.version(group)}` : "v1",
      kind: this.kind(plural),
      metadata,
    };
    const binder = { kind: "ServiceAccount", name: "klutch-binder", namespace: w.clusterNamespace };
    switch (plural) {
      case "leases":
        return { ...head, spec: { holderIdentity: "replay" } };
      case "roles":
        return { ...head, rules: [] };
      case "rolebindings":
        return {
          ...head,
          roleRef: {
            apiGroup: "rbac.authorization.k8s.io",
            kind: "ClusterRole",
            name: ns === w.serviceNamespace ? `klutch-binder-${w.clusterNamespace}` : "klutch-binder",
          },
          subjects: [binder],
        };
      case "clusterroles":
        return { ...head, rules: name === "klutch-binder" ? binderRules() : binderNamespaceRules(w.apis) };
      case "clusterrolebindings":
        return {
          ...head,
          roleRef: {
            apiGroup: "rbac.authorization.k8s.io",
            kind: "ClusterRole",
            name: `klutch-binder-${w.clusterNamespace}`,
          },
          subjects: [binder],
        };
      case "customresourcedefinitions":
        if (name === "apiservicebindings.klutch.anynines.com") return w.bindingCrd as Record<string, unknown>;
        return {
          ...head,
          spec: {
            group: name.split(".").slice(1).join("."),
            scope: "Namespaced",
            names: { plural: name.split(".")[0], kind: "Replay", singular: "replay", listKind: "ReplayList" },
            versions: [
              {
                name: "v1",
                served: true,
                storage: true,
                schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
              },
            ],
          },
        };
      case "apiservicenamespaces":
        return { ...head, spec: {} };
      case "apiserviceexportrequests":
        return { ...head, spec: { resources: [{ group: "anynines.com", resource: "postgresqlinstances" }] } };
      case "apiserviceexports": {
        const [p, ...g] = name.split(".");
        return {
          ...head,
          spec: {
            group: g.join("."),
            names: { plural: p, kind: "Replay", singular: "replay", listKind: "ReplayList" },
            scope: "Namespaced",
            informerScope: "Namespaced",
            versions: [
              {
                name: "v1",
                served: true,
                storage: true,
                schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
              },
            ],
          },
        };
      }
      case "apiservicebindings":
        return {
          ...head,
          spec: {
            kubeconfigSecretRef: { name: "kubeconfig", namespace: w.konnectorNamespace, key: "kubeconfig" },
          },
        };
      case "clusterbindings":
        return {
          ...head,
          spec: {
            kubeconfigSecretRef: { name: "kubeconfig", key: "kubeconfig" },
            providerPrettyName: "replay",
          },
        };
      case "secrets":
      case "configmaps":
        return { ...head, data: {} };
      default:
        return { ...head, spec: {} };
    }
  }

  /** Whether a name is one the backend's controllers would use (kept as part of the world). */
  private isReal(name: string): boolean {
    return name === "cluster" || name.startsWith("klutch-binder");
  }

  /**
   * The name of the object a call without a named target makes or uses: the backend's own
   * names for the RBAC objects and the ClusterBinding (so replaying the backend builds what
   * its controllers build), a throwaway name for everything else.
   */
  private freshName(call: ConcreteCall): { name: string; real: boolean } {
    const plural = call.resource.split("/")[0]!;
    const cns = this.world.clusterNamespace;
    if (plural === "clusterbindings") return { name: "cluster", real: true };
    if (plural === "clusterroles" || plural === "clusterrolebindings")
      return { name: `klutch-binder-${cns}`, real: true };
    if (plural === "rolebindings") return { name: "klutch-binder", real: true };
    serial += 1;
    if (plural === "customresourcedefinitions" || plural === "apiserviceexports") {
      return { name: `replays${serial}.replay.klutch.test`, real: false };
    }
    return { name: `replay-${call.row.id.toLowerCase()}-${serial}`, real: false };
  }

  /** Makes an object exist with admin rights (fixtures the actor then reads, changes or deletes). */
  private async ensure(
    group: string,
    plural: string,
    ns: string | undefined,
    name: string,
  ): Promise<boolean> {
    const r = await this.admin.request(
      "POST",
      this.path(group, plural, ns),
      this.body(group, plural, name, ns),
    );
    if (r.status >= 300 && r.status !== 409)
      throw new Error(`fixture ${plural} ${ns ?? ""}/${name}: ${r.status} ${r.body}`);
    return r.status < 300;
  }

  /** Replays every verb of every call of the rows as `actor`; returns the refusals. */
  async replay(actor: RawClient, rows: readonly ContractRow[]): Promise<Refusal[]> {
    const refusals: Refusal[] = [];
    const calls = concreteCalls(rows, {
      apis: this.world.apis,
      clusterNamespace: this.world.clusterNamespace,
    });
    for (const call of calls) refusals.push(...(await this.replayCall(actor, call)));
    return refusals;
  }

  /**
   * Replays the verbs rows mark `refused` (upstream calls them, our RBAC refuses them on
   * purpose) as `actor`; returns the calls that were not refused. A create is tried on the
   * name the program would use; an update on that object made first with admin rights, and
   * removed again after.
   */
  async replayRefused(actor: RawClient, rows: readonly ContractRow[]): Promise<Refusal[]> {
    const allowed: Refusal[] = [];
    const calls = concreteCalls(
      rows.filter((r) => r.refused?.length).map((r) => ({ ...r, verbs: r.refused! })),
      { apis: this.world.apis, clusterNamespace: this.world.clusterNamespace },
    );
    for (const call of calls) {
      const plural = call.resource.split("/")[0]!;
      const ns = this.namespaceOf(call.row, plural);
      const name = call.name ?? this.freshName(call).name;
      for (const verb of call.verbs) {
        let r: Response;
        let made: boolean;
        if (verb === "create") {
          r = await actor.request(
            "POST",
            this.path(call.group, plural, ns),
            this.body(call.group, plural, name, ns),
          );
          made = r.status < 300;
        } else if (verb === "update") {
          made = await this.ensure(call.group, plural, ns, name);
          const current = await this.admin.request("GET", this.path(call.group, plural, ns, name));
          r = await actor.request("PUT", this.path(call.group, plural, ns, name), JSON.parse(current.body));
        } else {
          throw new Error(`${call.row.id}: replaying a refused ${verb} is not written yet`);
        }
        if (made) await this.admin.request("DELETE", this.path(call.group, plural, ns, name));
        if (r.status !== 403)
          allowed.push({
            row: call.row.id,
            verb,
            path: this.path(call.group, plural, ns, name),
            status: r.status,
            message: r.body.slice(0, 300),
          });
      }
    }
    return allowed;
  }

  private async replayCall(actor: RawClient, call: ConcreteCall): Promise<Refusal[]> {
    const refusals: Refusal[] = [];
    const [plural, sub] = call.resource.split("/") as [string, string | undefined];
    const ns = this.namespaceOf(call.row, plural);
    const group = call.group;
    const order: Verb[] = ["create", "get", "list", "watch", "update", "patch", "delete"];
    const verbs = order.filter((v) => call.verbs.includes(v));
    const made: string[] = [];
    const fixtures: string[] = [];
    let target = call.name;
    const note = async (verb: Verb, method: string, path: string, body?: unknown, type?: string) => {
      const r = await actor.request(method, path, body, type);
      if (r.status === 403)
        refusals.push({ row: call.row.id, verb, path, status: r.status, message: r.body.slice(0, 300) });
      else if (r.status >= 300 && r.status !== 409 && r.status !== 404) {
        throw new Error(`${call.row.id} ${verb} ${path}: unexpected ${r.status} ${r.body.slice(0, 300)}`);
      }
      return r;
    };
    for (const verb of verbs) {
      const listPath = (q: string) =>
        this.path(
          group,
          plural,
          call.row.namespace === "all" || call.row.namespace === "cluster" ? undefined : ns,
          undefined,
          q,
        );
      switch (verb) {
        case "create": {
          const fresh = target === undefined ? this.freshName(call) : { name: target, real: true };
          const r = await note(
            verb,
            "POST",
            this.path(group, plural, ns),
            this.body(group, plural, fresh.name, ns),
          );
          if (r.status < 300 && !fresh.real) made.push(fresh.name);
          target ??= fresh.name;
          break;
        }
        case "list":
          await note(verb, "GET", listPath(""));
          break;
        case "watch":
          await note(verb, "GET", listPath("?watch=true&timeoutSeconds=1"));
          break;
        case "get":
        case "update":
        case "patch": {
          target ??= this.freshName(call).name;
          if ((await this.ensure(group, plural, ns, target)) && !call.name && !this.isReal(target)) {
            fixtures.push(target);
          }
          const objPath = this.path(group, `${plural}${sub ? `/${sub}` : ""}`, ns, target);
          if (verb === "get") await note(verb, "GET", objPath);
          else if (verb === "update") {
            const current = await this.admin.request("GET", this.path(group, plural, ns, target));
            await note(verb, "PUT", objPath, JSON.parse(current.body));
          } else {
            await note(
              verb,
              "PATCH",
              objPath,
              { metadata: { annotations: { "replay.klutch.test/row": call.row.id } } },
              "application/merge-patch+json",
            );
          }
          break;
        }
        case "delete": {
          // Delete what this replay made, or a throwaway fixture: never a real object of the binding.
          const name = made.pop() ?? this.freshName(call).name;
          if ((await this.ensure(group, plural, ns, name)) && !this.isReal(name)) fixtures.push(name);
          await note(verb, "DELETE", this.path(group, plural, ns, name));
          break;
        }
      }
    }
    // Objects made by create or as fixtures and still there: removed with admin rights.
    for (const name of new Set([...made, ...fixtures])) {
      await this.admin.request("DELETE", this.path(group, plural, ns, name));
    }
    return refusals;
  }
}

/** The bound CRD names of a world, for assertions. */
export const boundCrdNames = (apis: ExportedApiConfig[]) => apis.map((a) => crdName(a));
