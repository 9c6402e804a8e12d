import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalClusters } from "../../host/local-clusters";
import {
  BINDING_ADMISSION_POLICY,
  bindingAdmissionManifests,
} from "../../lib/dataservices/binding-admission";
import { DATASERVICES_GROUP } from "../../lib/dataservices/xrds";
import { kubectl, kubectlApply, kubectlJson } from "../helpers/kubectl";

const CLUSTER = "binding-admission";
const OFFERED = [
  "a8s-servicebinding-network",
  "a8s-servicebinding-network-noop",
  "a8s-servicebinding-network-proxy",
];

/**
 * The ServiceBinding claim CRD as far as the policy reads it: `spec.compositionRef` as Crossplane
 * generates it for every claim (internal/xcrd/schemas.go at v1.20.11: an object with a required
 * `name`), beside upstream's own fields (lib/dataservices/xrds.ts), as the konnector copies the
 * exported schema into an app cluster.
 */
const claimCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `servicebindings.${DATASERVICES_GROUP}` },
  spec: {
    group: DATASERVICES_GROUP,
    names: {
      kind: "ServiceBinding",
      plural: "servicebindings",
      singular: "servicebinding",
      listKind: "ServiceBindingList",
    },
    scope: "Namespaced",
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: {
                  compositionRef: {
                    type: "object",
                    required: ["name"],
                    properties: { name: { type: "string" } },
                  },
                  instanceRef: { type: "string" },
                  serviceInstanceType: { type: "string" },
                },
              },
              status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            },
          },
        },
      },
    ],
  },
};

const binding = (name: string, composition?: string) =>
  JSON.stringify({
    apiVersion: `${DATASERVICES_GROUP}/v1`,
    kind: "ServiceBinding",
    metadata: { name, namespace: "default" },
    spec: {
      instanceRef: "orders",
      serviceInstanceType: "postgresql",
      ...(composition ? { compositionRef: { name: composition } } : {}),
    },
  });

/**
 * The binding admission policy on a real kube-apiserver: it compiles (a CEL error would refuse
 * the policy or every binding), refuses a network-aware composition the environment does not
 * offer naming field, value and the offered ones, and admits offered ones, upstream's own
 * compositions, none at all, and updates of what was already admitted.
 */
describe("ServiceBinding admission on a real API server (e2e)", function () {
  this.timeout(5 * 60_000);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-binding-admission-"));
  const clusters = new LocalClusters(stateDir);
  const kc = () => clusters.kubeconfigPath(CLUSTER);

  before(async () => {
    await clusters.up([CLUSTER]);
    assert.equal(kubectlApply(kc(), JSON.stringify(claimCrd)).status, 0);
    kubectl(kc(), ["wait", "--for=condition=Established", "--timeout=60s", `crd/${claimCrd.metadata.name}`]);
  });

  after(async () => {
    await clusters.down();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("the API server takes the policy and type-checks its CEL against the claim's schema without a warning", async () => {
    const { policy, binding: policyBinding } = bindingAdmissionManifests(OFFERED);
    for (const o of [policy, policyBinding]) {
      const r = kubectlApply(kc(), JSON.stringify(o));
      assert.equal(r.status, 0, r.stderr);
    }
    // The policy's typeChecking is filled in once the API server has checked the expressions against the CRD.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const stored = kubectlJson<{ status?: { typeChecking?: { expressionWarnings?: unknown[] } } }>(kc(), [
        "get",
        "validatingadmissionpolicy",
        BINDING_ADMISSION_POLICY,
      ]);
      if (stored.status?.typeChecking) {
        assert.deepEqual(stored.status.typeChecking.expressionWarnings ?? [], []);
        break;
      }
      assert.ok(Date.now() < deadline, "the policy was not type-checked within 60 s");
      await new Promise((r) => setTimeout(r, 500));
    }
  });

  it("refuses a network-aware composition not offered, naming the field, the value and what is offered; nothing is created", async () => {
    // A new policy is enforced once the API server's informer has it: retry briefly.
    let refused = { status: 0, stdout: "", stderr: "" };
    for (let i = 0; i < 40; i++) {
      refused = kubectlApply(kc(), binding("orders-wg", "a8s-servicebinding-network-wireguard"));
      if (refused.status !== 0) break;
      kubectl(kc(), ["delete", "servicebinding", "orders-wg", "-n", "default"]);
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.notEqual(refused.status, 0, "the binding was admitted");
    assert.match(
      refused.stderr,
      /spec\.compositionRef\.name 'a8s-servicebinding-network-wireguard' is not a ServiceBinding composition this environment offers/,
    );
    assert.match(
      refused.stderr,
      /offers a8s-servicebinding-network, a8s-servicebinding-network-noop, a8s-servicebinding-network-proxy/,
    );
    const left = kubectlJson<{ items: unknown[] }>(kc(), ["get", "servicebindings", "-n", "default"]);
    assert.equal(left.items.length, 0);
    const a9s = kubectlApply(kc(), binding("cache", "a9s-servicebinding-network"));
    assert.notEqual(a9s.status, 0, "an a9s network binding where none is offered");
  });

  it("admits an offered network-aware composition, upstream's own, and none; an update that keeps the name is admitted, one that moves it out of the offer is not", () => {
    for (const [name, composition] of [
      ["orders", "a8s-servicebinding-network-proxy"],
      ["orders-default", "a8s-servicebinding-network"],
      ["orders-a8s", "a8s-servicebinding"],
      ["orders-a9s", "a9s-servicebinding"],
      ["orders-plain", undefined],
    ] as const) {
      const r = kubectlApply(kc(), binding(name, composition));
      assert.equal(r.status, 0, `${name}: ${r.stderr}`);
    }
    kubectl(kc(), ["label", "servicebinding", "orders", "-n", "default", "team=a"]);
    const moved = kubectlApply(kc(), binding("orders", "a8s-servicebinding-network-awsvpcpeering"));
    assert.notEqual(moved.status, 0);
    assert.match(
      moved.stderr,
      /'a8s-servicebinding-network-awsvpcpeering' is not a ServiceBinding composition/,
    );
  });

  it("where the environment offers no network-aware binding, it says so and how to get one", async () => {
    const { policy } = bindingAdmissionManifests([]);
    assert.equal(kubectlApply(kc(), JSON.stringify(policy)).status, 0);
    let r = { status: 0, stdout: "", stderr: "" };
    for (let i = 0; i < 40; i++) {
      r = kubectlApply(kc(), binding("late", "a8s-servicebinding-network"));
      if (r.status !== 0) break;
      kubectl(kc(), ["delete", "servicebinding", "late", "-n", "default"]);
      await new Promise((res) => setTimeout(res, 500));
    }
    assert.notEqual(r.status, 0);
    assert.match(
      r.stderr,
      /offers no network-aware binding \(its control plane runs no Klutch function: crossplane\.functionKlutch\)/,
    );
    // What was admitted before stays writable: its name is unchanged.
    assert.equal(
      kubectl(kc(), ["label", "servicebinding", "orders", "-n", "default", "team=b", "--overwrite"]).length >
        0,
      true,
    );
  });
});
