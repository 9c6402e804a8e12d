import { A9S_NETWORK_SERVICE_BINDING, NETWORK_SERVICE_BINDING } from "./compositions";
import { DATASERVICES_GROUP } from "./xrds";

/**
 * Refusing, when it is written, a ServiceBinding whose `compositionRef` names a network-aware
 * binding composition the environment does not offer. Pure.
 *
 * Crossplane accepts such a claim and leaves it waiting: its XR says "cannot select
 * composition" on its own Synced condition, and the claim, all an app developer sees through
 * the konnector, says only "Claim is waiting for composite resource to become Ready" (the
 * claim reconciler copies no XR condition but the custom ones its functions set, and no
 * function runs without a composition: internal/controller/apiextensions/claim/reconciler.go
 * at v1.20.11). A ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, GA since
 * Kubernetes 1.30) refuses the write instead, on the app cluster where the developer applies
 * it and on the control plane, with a message naming the field, the value and the offered ones.
 *
 * Only names in this project's own domain are judged (`a8s-servicebinding-network…`,
 * `a9s-servicebinding-network…`), where the environment knows the whole set: upstream's
 * compositions (`a8s-servicebinding`, `a9s-servicebinding`, any a newer Configuration brings)
 * are upstream's to check, as its XRD's CEL rules do.
 */

export const BINDING_ADMISSION_POLICY = "klutch-servicebinding-composition";
/** The prefixes of the network-aware binding compositions' names (lib/dataservices/compositions.ts). */
export const NETWORK_BINDING_PREFIXES = [NETWORK_SERVICE_BINDING, A9S_NETWORK_SERVICE_BINDING] as const;

/** Of an environment's binding compositions, the network-aware ones (the names this policy judges). */
export function offeredNetworkBindings(compositions: readonly string[]): string[] {
  return [
    ...new Set(compositions.filter((c) => NETWORK_BINDING_PREFIXES.some((p) => c.startsWith(p)))),
  ].sort();
}

const cel = (s: string) => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

/** The CEL that admits a binding's composition name: outside the domain, offered, or unchanged. */
export function admissionExpression(offered: readonly string[]): string {
  const name = "object.spec.compositionRef.name";
  const has = (o: string) =>
    `has(${o}.spec) && has(${o}.spec.compositionRef) && has(${o}.spec.compositionRef.name)`;
  const inDomain = NETWORK_BINDING_PREFIXES.map((p) => `${name}.startsWith(${cel(p)})`).join(" || ");
  const list = `[${[...offered].sort().map(cel).join(", ")}]`;
  // An update that leaves the name as it was is admitted (the konnector's and Crossplane's own
  // writes, or a binding made before the policy), so nothing already made is stuck.
  const unchanged = `(oldObject != null && ${has("oldObject")} && oldObject.spec.compositionRef.name == ${name})`;
  return `!(${has("object")}) || !(${inDomain}) || ${name} in ${list} || ${unchanged}`;
}

/** The refusal, as a CEL message expression (it names the value the request carried). */
export function admissionMessage(offered: readonly string[]): string {
  const choice =
    offered.length > 0
      ? `offers ${[...offered].sort().join(", ")}: use one of them, or leave compositionRef out for the default binding`
      : "offers no network-aware binding (its control plane runs no Klutch function: crossplane.functionKlutch); leave compositionRef out for the default binding";
  return `'spec.compositionRef.name \\'' + object.spec.compositionRef.name + '\\' is not a ServiceBinding composition this environment offers; it ${choice.replace(/'/g, "\\'")}'`;
}

type Json = Record<string, unknown>;

/** The policy and its binding for one cluster (the control plane or an app cluster). */
export function bindingAdmissionManifests(
  offered: readonly string[],
  labels: Record<string, string> = {},
): { policy: Json; binding: Json } {
  return {
    policy: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: BINDING_ADMISSION_POLICY, labels },
      spec: {
        // A CEL error (which the expression guards against) refuses rather than lets a bad name in.
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [DATASERVICES_GROUP],
              apiVersions: ["*"],
              operations: ["CREATE", "UPDATE"],
              resources: ["servicebindings"],
            },
          ],
        },
        validations: [
          {
            expression: admissionExpression(offered),
            messageExpression: admissionMessage(offered),
            reason: "Invalid",
          },
        ],
      },
    },
    binding: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name: BINDING_ADMISSION_POLICY, labels },
      spec: { policyName: BINDING_ADMISSION_POLICY, validationActions: ["Deny"] },
    },
  };
}
