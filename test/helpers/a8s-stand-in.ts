import { strict as assert } from "node:assert";
import { kubectlApply, kubectlJson, kubectlTry } from "./kubectl";

/**
 * a8s's ServiceBinding where a8s cannot run (a local control plane), for the network-aware
 * binding that composes it (programs/composition-function/a8s-binding.ts). Only what Klutch's own
 * `a8s-servicebinding` composition writes and reads of it (anynines/klutchio
 * crossplane-api/api/a8s/servicebinding/composition.yaml): spec.instance {apiVersion, kind, name,
 * namespace}, status.implemented and status.secret {name, namespace}; a8s's Secret
 * `<binding>-service-binding` with the keys klutchio's docs give (username, password, database,
 * instance_service). The test plays a8s's controller with `implementA8sBinding`; nothing else
 * of a8s is imitated.
 */

/** a8s's ServiceBinding API version, which the composition writes and its Objects wrap. */
const A8S_BINDING_API_VERSION = "servicebindings.anynines.com/v1beta3";

/**
 * The CRD's name, which is also the resource fully qualified for kubectl: Klutch's claim is a
 * `servicebindings` too (group anynines.com).
 */
export const A8S_BINDING_CRD_NAME = "servicebindings.servicebindings.anynines.com";

/**
 * a8s's ServiceBinding for a claim as klutchio's a8s-servicebinding composition writes it
 * (crossplane-api/api/a8s/servicebinding/composition.yaml): named as the claim, in the claim's
 * namespace, for the Postgresql its instanceRef names (serviceInstanceType postgresql). What the
 * tests expect the network-aware composition to make.
 */
export function a8sBindingManifest(claim: string, namespace: string, instance: string) {
  return {
    apiVersion: A8S_BINDING_API_VERSION,
    kind: "ServiceBinding",
    metadata: { name: claim, namespace },
    spec: {
      instance: {
        apiVersion: "postgresql.anynines.com/v1beta3",
        kind: "Postgresql",
        name: instance,
        namespace,
      },
    },
  };
}

export const A8S_BINDING_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: A8S_BINDING_CRD_NAME },
  spec: {
    group: "servicebindings.anynines.com",
    scope: "Namespaced",
    names: {
      kind: "ServiceBinding",
      plural: "servicebindings",
      singular: "servicebinding",
      listKind: "ServiceBindingList",
    },
    versions: [
      {
        name: "v1beta3",
        served: true,
        storage: true,
        // a8s's controller writes the status, never the creator: a subresource of its own.
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                required: ["instance"],
                properties: {
                  instance: {
                    type: "object",
                    required: ["apiVersion", "kind", "name", "namespace"],
                    properties: {
                      apiVersion: { type: "string" },
                      kind: { type: "string" },
                      name: { type: "string" },
                      namespace: { type: "string" },
                    },
                  },
                },
              },
              status: {
                type: "object",
                properties: {
                  implemented: { type: "boolean" },
                  secret: {
                    type: "object",
                    properties: { name: { type: "string" }, namespace: { type: "string" } },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

/**
 * What a8s's controller does once it has made a binding: writes its Secret, then says so in the
 * binding's status.
 */
export function implementA8sBinding(
  kubeconfig: string,
  namespace: string,
  binding: string,
  credentials: Record<"username" | "password" | "database" | "instance_service", string>,
): void {
  const secret = `${binding}-service-binding`;
  const applied = kubectlApply(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: secret, namespace },
      type: "Opaque",
      stringData: credentials,
    }),
  );
  assert.equal(applied.status, 0, applied.stderr);
  const patched = kubectlTry(kubeconfig, [
    "-n",
    namespace,
    "patch",
    A8S_BINDING_CRD_NAME,
    binding,
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify({ status: { implemented: true, secret: { name: secret, namespace } } }),
  ]);
  assert.equal(patched.status, 0, patched.stderr);
}

/**
 * provider-kubernetes' Objects that wrap an a8s binding. Each must be gone before the CRD goes,
 * or its finalizer stays for good ("no matches for kind ServiceBinding"), and so does every
 * teardown that waits for it (seen in the local-stack e2e: the stack's destroy hung on one).
 */
export function a8sBindingObjects(kubeconfig: string): string[] {
  return kubectlJson<{
    items: { metadata: { name: string }; spec: { forProvider: { manifest: { apiVersion: string } } } }[];
  }>(kubeconfig, ["get", "objects.kubernetes.crossplane.io"])
    .items.filter((o) => o.spec.forProvider.manifest.apiVersion === A8S_BINDING_API_VERSION)
    .map((o) => o.metadata.name);
}
