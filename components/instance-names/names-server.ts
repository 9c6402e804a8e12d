import { INSTANCE_NAMES_PROCESS } from "../../lib/instance-names/watcher-process";

/**
 * The objects of an app cluster's instance-names server, pure: one pod of two containers that
 * share an emptyDir. The watcher (programs/instance-names/, in the bridge image) lists and
 * watches the bound claims and writes the names they give into a hosts file there; CoreDNS
 * serves that file (its `hosts` plugin re-reads it every second) for the zones alone. A
 * ClusterIP Service is what the cluster's own DNS forwards the zones to (corefile-stub-zones.ts).
 */
export const NAMES_NAMESPACE = "klutch-instance-names";
export const NAMES_APP = "instance-names";
/** Unprivileged, so neither container needs a capability; the Service maps 53 to it. */
export const NAMES_PORT = 1053;
const WATCHER_HEALTH_PORT = 8090;
const COREDNS_READY_PORT = 8181;
const HOSTS_DIR = "/names";
/** The claims whose status.managed.instanceNames the watcher reads, as the konnector names them. */
export const CLAIM_RESOURCES = ["anynines.com/v1/servicebindings"];

export interface NamesServerSettings {
  zones: string[];
  image: string;
  corednsImage: string;
  imagePullPolicy: "Never" | "IfNotPresent";
  replicas: number;
}

/** The names server's Corefile: the zones from the hosts file, nothing forwarded anywhere. */
export function namesCorefile(zones: readonly string[]): string {
  return `${zones.join(" ")}:${NAMES_PORT} {
    errors
    health :8080
    ready :${COREDNS_READY_PORT}
    hosts ${HOSTS_DIR}/hosts {
        reload 1s
        ttl 5
    }
}
`;
}

const hardened = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
};

/** The pod template's spec (the Deployment's). */
export function namesPodSpec(s: NamesServerSettings, serviceAccount: string, configMap: string) {
  return {
    serviceAccountName: serviceAccount,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      seccompProfile: { type: "RuntimeDefault" },
    },
    containers: [
      {
        name: "coredns",
        image: s.corednsImage,
        imagePullPolicy: s.imagePullPolicy,
        args: ["-conf", "/etc/coredns/Corefile"],
        ports: [
          { name: "dns", containerPort: NAMES_PORT, protocol: "UDP" },
          { name: "dns-tcp", containerPort: NAMES_PORT, protocol: "TCP" },
        ],
        readinessProbe: { httpGet: { path: "/ready", port: COREDNS_READY_PORT }, periodSeconds: 2 },
        livenessProbe: {
          httpGet: { path: "/health", port: 8080 },
          initialDelaySeconds: 30,
          failureThreshold: 5,
        },
        resources: { requests: { cpu: "10m", memory: "20Mi" }, limits: { memory: "64Mi" } },
        securityContext: hardened,
        volumeMounts: [
          { name: "config", mountPath: "/etc/coredns", readOnly: true },
          { name: "names", mountPath: HOSTS_DIR, readOnly: true },
        ],
      },
      {
        name: "watcher",
        image: s.image,
        imagePullPolicy: s.imagePullPolicy,
        command: [
          "/usr/local/bin/node",
          INSTANCE_NAMES_PROCESS,
          ...s.zones.flatMap((z) => ["--zone", z]),
          ...CLAIM_RESOURCES.flatMap((r) => ["--resource", r]),
          "--hosts-file",
          `${HOSTS_DIR}/hosts`,
          "--health-port",
          String(WATCHER_HEALTH_PORT),
        ],
        readinessProbe: { httpGet: { path: "/readyz", port: WATCHER_HEALTH_PORT }, periodSeconds: 2 },
        livenessProbe: { httpGet: { path: "/healthz", port: WATCHER_HEALTH_PORT }, initialDelaySeconds: 30 },
        resources: { requests: { cpu: "10m", memory: "48Mi" }, limits: { memory: "160Mi" } },
        securityContext: hardened,
        volumeMounts: [{ name: "names", mountPath: HOSTS_DIR }],
      },
    ],
    volumes: [
      { name: "config", configMap: { name: configMap } },
      { name: "names", emptyDir: { medium: "Memory", sizeLimit: "8Mi" } },
    ],
  };
}
