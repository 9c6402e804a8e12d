/**
 * The faults of a chaos run on the local stack (test/bench/chaos.ts), each what a hand or a
 * failing node does to a group's data path, and the prober that watches every path from an app
 * cluster's pod.
 */
import { proxyName } from "../../lib/bridge/grouping";
import { kubectl, kubectlJson } from "./kubectl";

export const FAULTS = [
  "proxy pod",
  "proxy Deployment",
  "proxy Service",
  "proxy ConfigMap",
  "instance pod",
  "bridge pod",
] as const;
export type Fault = (typeof FAULTS)[number];

/** The namespace the bridge's groups' objects and the bridge itself run in. */
const NETWORK_NS = "klutch-network";

export interface FaultTarget {
  controlPlane: string;
  /** The group a proxy fault hits: its consumer namespace (the proxy implementation's group). */
  consumerNamespace: string;
  instanceNamespace: string;
  /** The label selector of the instance's pods. */
  instanceSelector: string;
  /** Picks one of several (seeded by the run). */
  pick: <T>(xs: readonly T[]) => T;
}

const names = (kc: string, ns: string, what: string, selector: string): string[] =>
  kubectlJson<{ items: { metadata: { name: string } }[] }>(kc, [
    "-n",
    ns,
    "get",
    what,
    "-l",
    selector,
  ]).items.map((o) => o.metadata.name);

/** Does the fault; returns what it deleted, as `kind/name`. */
export function inflict(fault: Fault, t: FaultTarget): string {
  const proxy = proxyName(`${t.consumerNamespace}/proxy`);
  const del = (ns: string, kind: string, name: string) => {
    kubectl(t.controlPlane, ["-n", ns, "delete", kind, name, "--wait=false"]);
    return `${kind}/${name}`;
  };
  const instanceOf = `app.kubernetes.io/instance=${proxy}`;
  switch (fault) {
    case "proxy pod":
      return del(NETWORK_NS, "pod", t.pick(names(t.controlPlane, NETWORK_NS, "pods", instanceOf)));
    case "proxy Deployment":
      return del(NETWORK_NS, "deployment", proxy);
    case "proxy Service":
      return del(NETWORK_NS, "service", proxy);
    case "proxy ConfigMap":
      return del(
        NETWORK_NS,
        "configmap",
        t.pick(names(t.controlPlane, NETWORK_NS, "configmaps", instanceOf)),
      );
    case "instance pod":
      return del(
        t.instanceNamespace,
        "pod",
        t.pick(names(t.controlPlane, t.instanceNamespace, "pods", t.instanceSelector)),
      );
    case "bridge pod": {
      // The leader's: the one whose loss matters (its Lease's holder starts with its pod's name).
      const holder = kubectl(t.controlPlane, [
        "-n",
        NETWORK_NS,
        "get",
        "lease",
        "klutch-bridge",
        "-o",
        "jsonpath={.spec.holderIdentity}",
      ]);
      const pods = names(t.controlPlane, NETWORK_NS, "pods", "app.kubernetes.io/name=klutch-bridge");
      return del(NETWORK_NS, "pod", pods.find((p) => holder.startsWith(p)) ?? t.pick(pods));
    }
  }
}

export interface ProbeTarget {
  path: string;
  host: string;
  port: number;
}

/**
 * A pod that, once a second, opens a connection to every path and sends PostgreSQL's SSLRequest:
 * only the server answers it (`S` or `N`, PostgreSQL's protocol-flow docs), so a proxy that
 * accepts the connection with no instance behind it counts as down. One JSON line per probe.
 * It runs the bridge image's Node.js (the app clusters' nodes import it; nothing can be pulled).
 */
export function proberPod(name: string, namespace: string, image: string, targets: ProbeTarget[]): object {
  const script = `
const net = require("node:net");
const targets = JSON.parse(process.env.TARGETS);
const probe = (t) => new Promise((done) => {
  const s = net.connect({ host: t.host, port: t.port });
  let over = false;
  const end = (ok) => { if (!over) { over = true; s.destroy(); done(ok); } };
  s.setTimeout(2000, () => end(false));
  s.on("connect", () => s.write(Buffer.from([0, 0, 0, 8, 4, 210, 22, 47])));
  s.on("data", (d) => end(d[0] === 0x4e || d[0] === 0x53));
  s.on("error", () => end(false));
  s.on("close", () => end(false));
});
const tick = async () => {
  const at = Date.now();
  const ok = await Promise.all(targets.map(probe));
  for (const [i, t] of targets.entries()) console.log(JSON.stringify({ at, path: t.path, ok: ok[i] }));
};
setInterval(tick, 1000);
`;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace },
    spec: {
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: "prober",
          image,
          imagePullPolicy: "Never",
          command: ["node", "-e", script],
          env: [{ name: "TARGETS", value: JSON.stringify(targets) }],
        },
      ],
    },
  };
}
