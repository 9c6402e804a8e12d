import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { kubectlApply, kubectlJson, kubectlTry } from "./kubectl";

/**
 * provider-anynines where no anynines service broker can be reached (a local control plane), for
 * the network-aware a9s binding (programs/composition-function/a9s-binding.ts). Its
 * ServiceBinding CRD is upstream's own (test/fixtures/provider-anynines/servicebindings.yaml), so
 * the API server checks what the composition writes against upstream's schema. The test plays
 * the provider's controller with `implementA9sBinding`: what its Create and Observe leave behind
 * (provider-anynines/internal/controller/servicebinding/servicebinding.go, anynines/klutchio
 * 0b4539e), namely the broker's credentials flattened into the Secret the binding's
 * spec.writeConnectionSecretToRef names (crossplane-runtime's connection publisher, which makes
 * the managed resource the Secret's controller owner), then status.atProvider and Ready=True.
 */

export const A9S_BINDING_CRD_NAME = "servicebindings.dataservices.anynines.com";

export function a9sBindingCrd(root: string): object {
  return parse(
    fs.readFileSync(path.join(root, "test", "fixtures", "provider-anynines", "servicebindings.yaml"), "utf8"),
  ) as object;
}

/**
 * What provider-anynines' package gives Crossplane with its CRDs: the right to manage its
 * managed resources. Crossplane's RBAC manager makes such a ClusterRole per provider revision,
 * aggregated to Crossplane's own by this label (cluster/charts/crossplane, 1.20).
 */
export const A9S_CROSSPLANE_ROLE = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: {
    name: "e2e:provider-anynines-stand-in:aggregate-to-crossplane",
    labels: { "rbac.crossplane.io/aggregate-to-crossplane": "true" },
  },
  rules: [
    {
      apiGroups: ["dataservices.anynines.com"],
      resources: ["servicebindings", "servicebindings/status"],
      verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
    },
  ],
};

interface ManagedBinding {
  metadata: { name: string; uid: string; labels: Record<string, string> };
  spec: Record<string, any>;
}

/** The provider-anynines ServiceBindings Crossplane composed for a claim. */
export function a9sBindingsOf(kubeconfig: string, claim: string, namespace: string): ManagedBinding[] {
  return kubectlJson<{ items: ManagedBinding[] }>(kubeconfig, [
    "get",
    A9S_BINDING_CRD_NAME,
    "-l",
    `crossplane.io/claim-name=${claim},crossplane.io/claim-namespace=${namespace}`,
  ]).items;
}

/**
 * What provider-anynines does once the broker has bound: the credentials (already flattened, as
 * `generateConnectionDetails` flattens them) in the Secret the binding names, owned by the
 * binding, then the binding's status.
 */
export function implementA9sBinding(
  kubeconfig: string,
  binding: ManagedBinding,
  credentials: Record<string, string>,
): void {
  const ref = binding.spec.writeConnectionSecretToRef as { name: string; namespace: string };
  const applied = kubectlApply(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: ref.name,
        namespace: ref.namespace,
        ownerReferences: [
          {
            apiVersion: "dataservices.anynines.com/v1",
            kind: "ServiceBinding",
            name: binding.metadata.name,
            uid: binding.metadata.uid,
            controller: true,
          },
        ],
      },
      type: "connection.crossplane.io/v1alpha1",
      stringData: credentials,
    }),
  );
  assert.equal(applied.status, 0, applied.stderr);
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const patched = kubectlTry(kubeconfig, [
    "patch",
    A9S_BINDING_CRD_NAME,
    binding.metadata.name,
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify({
      status: {
        atProvider: { state: "succeeded", serviceBindingID: 4711 },
        conditions: [
          { type: "Ready", status: "True", reason: "Available", lastTransitionTime: now },
          { type: "Synced", status: "True", reason: "ReconcileSuccess", lastTransitionTime: now },
        ],
      },
    }),
  ]);
  assert.equal(patched.status, 0, patched.stderr);
}

/**
 * Puts provider-anynines' stand-in on the control plane for a test: upstream's ServiceBinding
 * CRD, Crossplane's right to manage it, and the network-aware a9s composition under test.
 */
export function installA9sStandIn(kubeconfig: string, root: string, composition: object): void {
  for (const doc of [a9sBindingCrd(root), A9S_CROSSPLANE_ROLE]) {
    const r = kubectlApply(kubeconfig, JSON.stringify(doc));
    assert.equal(r.status, 0, r.stderr);
    if (doc !== A9S_CROSSPLANE_ROLE) {
      const established = kubectlTry(kubeconfig, [
        "wait",
        "--for=condition=Established",
        `crd/${A9S_BINDING_CRD_NAME}`,
        "--timeout=60s",
      ]);
      assert.equal(established.status, 0, established.stderr);
    }
  }
  const r = kubectlApply(kubeconfig, JSON.stringify(composition));
  assert.equal(r.status, 0, r.stderr);
}

/** Takes installA9sStandIn's objects away again (once the bindings that used them are gone). */
export function removeA9sStandIn(kubeconfig: string, compositionName: string): void {
  kubectlTry(kubeconfig, ["delete", "composition", compositionName, "--ignore-not-found"]);
  kubectlTry(kubeconfig, ["delete", "crd", A9S_BINDING_CRD_NAME, "--ignore-not-found"]);
  kubectlTry(kubeconfig, ["delete", "clusterrole", A9S_CROSSPLANE_ROLE.metadata.name, "--ignore-not-found"]);
}

/** An app developer's ServiceBinding claim with a network-aware a9s composition. */
export function a9sBindingClaim(name: string, namespace: string, type: string, composition: string): object {
  return {
    apiVersion: "anynines.com/v1",
    kind: "ServiceBinding",
    metadata: { name, namespace },
    spec: {
      instanceRef: name,
      serviceInstanceType: type,
      compositionRef: { name: composition },
      writeConnectionSecretToRef: { name: `${name}-credentials` },
    },
  };
}
