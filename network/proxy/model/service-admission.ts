import type { ConfigIssue } from "../../../lib/config/messages";
import { formatPath } from "../../../lib/config/messages";
import type { AppClusterConfig, ControlPlaneConfig } from "../../../lib/config/schema";
import { serviceExposure } from "../../contract/exposure";
import type { ProxyConnectorConfig } from "./config";
import { proxyExposure } from "./exposure";

/**
 * Asking an existing data-service cluster's admission whether it takes a proxy's Service as the
 * environment would make it (its type, exposure annotations, source ranges and traffic policy),
 * before anything is registered (../server-check.ts asks). Pure: what to ask, and what a refusal
 * means.
 *
 * A cluster the operator runs may refuse Service shapes by policy: a ValidatingAdmissionPolicy
 * or an admission webhook that forbids NodePort or LoadBalancer Services, or one without source
 * ranges. Such a refusal would otherwise come from the environment's `up` after half of it is
 * made. A server-side dry-run (`dryRun=All`) runs every admission step, validating policies and
 * webhooks included, and persists nothing (Kubernetes API concepts, "Dry-run": "the request is
 * still processed as typical request: ... admission controllers are run ... the object is not
 * persisted"); the node-port range is the one thing it does not check (node-port-probe.ts).
 */
export interface AdmissionProbe {
  /** The setting a refusal is about: the app cluster's `networkConnector.serviceType`. */
  at: (string | number)[];
  serviceType: "ClusterIP" | "NodePort" | "LoadBalancer";
  cluster: string;
  service: Record<string, unknown>;
}

/** The probe Service's labels, and its selector: its own, so it selects no pod. */
const PROBE_LABELS = {
  "app.kubernetes.io/part-of": "klutch",
  "app.kubernetes.io/component": "service-admission-probe",
};

/** A probe per proxy app cluster of a control plane given by kubeconfig (a made one has no operator's policies). */
export function admissionProbes(config: {
  controlPlane: Pick<ControlPlaneConfig, "name" | "kubeconfig">;
  appClusters: readonly Pick<AppClusterConfig, "infrastructure" | "network" | "networkConnector">[];
}): AdmissionProbe[] {
  if (!config.controlPlane.kubeconfig) return [];
  return config.appClusters.flatMap((app, i) => {
    const connector = app.networkConnector as Partial<ProxyConnectorConfig> & { implementation?: string };
    if (connector.implementation !== "proxy" || !connector.serviceType || !connector.portRange) return [];
    const serviceType = connector.serviceType;
    const exposed = proxyExposure(app, connector as ProxyConnectorConfig);
    // Validation names an app cluster without an exposure; nothing to ask for it.
    if (!exposed.ok) return [];
    const shape = serviceExposure(exposed.exposure, serviceType);
    const service = {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        generateName: "klutch-proxy-admission-probe-",
        labels: PROBE_LABELS,
        ...(Object.keys(shape.annotations).length > 0 ? { annotations: shape.annotations } : {}),
      },
      spec: {
        type: serviceType,
        selector: PROBE_LABELS,
        ports: [
          {
            name: "p0",
            port: connector.portRange.from,
            targetPort: connector.portRange.from,
            protocol: "TCP",
          },
        ],
        ...(shape.loadBalancerSourceRanges
          ? { loadBalancerSourceRanges: shape.loadBalancerSourceRanges }
          : {}),
        ...(shape.externalTrafficPolicy ? { externalTrafficPolicy: shape.externalTrafficPolicy } : {}),
      },
    };
    return [
      {
        at: ["appClusters", i, "networkConnector", "serviceType"],
        serviceType,
        cluster: config.controlPlane.name,
        service,
      },
    ];
  });
}

/**
 * The words of a refusal by admission: a ValidatingAdmissionPolicy's ("ValidatingAdmissionPolicy
 * 'p' with binding 'b' denied request: …", k8s.io/apiserver pkg/admission/plugin/policy/validating
 * dispatcher) and a webhook's ("admission webhook \"w\" denied the request: …", pkg/admission/plugin/
 * webhook/errors). Any other answer (RBAC, an unreachable server) is no verdict on the setting.
 */
const DENIED = /denied (the )?request/;

/** The issue a dry-run's refusal means, or undefined when it is not admission's verdict. */
export function admissionIssue(probe: AdmissionProbe, refusal: string): ConfigIssue | undefined {
  if (!DENIED.test(refusal)) return undefined;
  return {
    path: formatPath(probe.at),
    message: `${probe.serviceType}: the data-service cluster ${probe.cluster} refuses the proxy's ${probe.serviceType} Service (a server-side dry-run of it was denied: ${refusal}); choose a serviceType its admission allows, or have its operators admit the proxy's Service`,
  };
}
