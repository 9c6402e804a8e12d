import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse, parseAllDocuments, stringify } from "yaml";
import { planWireguard, WireguardPlan } from "./planner";
import { renderGatewayCloudInit } from "./render-cloud-init";
import {
  renderClientManifests,
  renderClientNetworkPolicy,
  renderGatewayManifests,
  renderGatewayNetworkPolicy,
} from "./render-k8s";
import { renderGatewayNftables } from "./render-nftables";
import {
  renderClientSetconf,
  renderClientWgQuick,
  renderGatewaySetconf,
  renderGatewayWgQuick,
} from "./render-wg-quick";
import { goldenChecker } from "../../../test/helpers/golden";

/** An obviously fake, well-formed key: readable words padded to 32 bytes of base64. */
function fakeKey(words: string): string {
  return `${words.padEnd(43, "0")}=`;
}

const KEYS = {
  gatewayPrivate: fakeKey("FAKE0GATEWAY0PRIVATE0KEY0TEST0ONLY"),
  gatewayPublic: fakeKey("FAKE0GATEWAY0PUBLIC0KEY0TEST0ONLY"),
  app1Private: fakeKey("FAKE0APP1000PRIVATE0KEY0TEST0ONLY"),
  app1Public: fakeKey("FAKE0APP1000PUBLIC0KEY0TEST0ONLY"),
  app2Public: fakeKey("FAKE0APP2000PUBLIC0KEY0TEST0ONLY"),
};

const gatewayKeys = {
  privateKey: KEYS.gatewayPrivate,
  clientPublicKeys: { "app-1": KEYS.app1Public, "app-2": KEYS.app2Public },
};
const app1Keys = { privateKey: KEYS.app1Private, gatewayPublicKey: KEYS.gatewayPublic };

function fixturePlan(): WireguardPlan {
  return planWireguard({
    tunnelCidr: "100.96.0.0/24",
    listenPort: 51820,
    endpoint: "vpn.example.test",
    appClusters: ["app-1", "app-2"],
    connections: [
      { name: "pg-a", appCluster: "app-1", instanceHost: "10.50.0.10", port: 5432 },
      { name: "pg-a2", appCluster: "app-1", instanceHost: "10.50.0.12", port: 5432 },
      { name: "pg-b", appCluster: "app-2", instanceHost: "10.50.0.20", port: 5432 },
    ],
  });
}

const k8sOptions = {
  name: "wg",
  gatewayNamespace: "klutch-wireguard",
  clientNamespace: "klutch-wireguard",
  skipAwait: true,
  keyRotation: "initial",
};

const golden = goldenChecker(path.join(__dirname, "golden"));

/** What the real wg-quick keeps of a wg-quick file: the part `wg setconf` accepts. */
function wgQuickStrip(config: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wg-strip-"));
  try {
    const file = path.join(dir, "wg0.conf");
    fs.writeFileSync(file, config, { mode: 0o600 });
    // wg-quick ends its output with one more blank line; that is not a difference wg cares about
    return execFileSync("/usr/bin/wg-quick", ["strip", file]).toString().trimEnd() + "\n";
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function yamlDocs(objects: unknown[]): string {
  return objects.map((o) => stringify(o, { lineWidth: 0, aliasDuplicateObjects: false })).join("---\n");
}

describe("WireGuard renderers", () => {
  const plan = fixturePlan();

  it("gateway wg-quick and setconf files", () => {
    golden("gateway.wg-quick.conf", renderGatewayWgQuick(plan, gatewayKeys));
    golden("gateway.setconf.conf", renderGatewaySetconf(plan, gatewayKeys));
  });

  it("client wg-quick and setconf files", () => {
    golden("client-app-1.wg-quick.conf", renderClientWgQuick(plan, "app-1", app1Keys));
    golden("client-app-1.setconf.conf", renderClientSetconf(plan, "app-1", app1Keys));
  });

  it("the setconf variant is exactly what the real `wg-quick strip` keeps", () => {
    const hooks = { postUp: ["nft -f /etc/klutch/wireguard.nft"], postDown: ["nft delete table inet x"] };
    assert.equal(
      wgQuickStrip(renderGatewayWgQuick(plan, gatewayKeys, hooks)),
      renderGatewaySetconf(plan, gatewayKeys),
    );
    assert.equal(
      wgQuickStrip(renderClientWgQuick(plan, "app-1", app1Keys)),
      renderClientSetconf(plan, "app-1", app1Keys),
    );
    assert.doesNotMatch(renderGatewaySetconf(plan, gatewayKeys), /Address|DNS|PostUp/);
  });

  it("puts each private key only where it belongs", () => {
    const gw = renderGatewayWgQuick(plan, gatewayKeys);
    assert.ok(gw.includes(`PrivateKey = ${KEYS.gatewayPrivate}`));
    assert.ok(!gw.includes(KEYS.app1Private));
    const client = renderClientWgQuick(plan, "app-1", app1Keys);
    assert.ok(client.includes(`PrivateKey = ${KEYS.app1Private}`));
    assert.ok(!client.includes(KEYS.gatewayPrivate));
  });

  it("refuses missing or malformed keys, naming them", () => {
    assert.throws(
      () => renderGatewayWgQuick(plan, { ...gatewayKeys, clientPublicKeys: { "app-1": KEYS.app1Public } }),
      /clientPublicKeys\.app-2 is missing/,
    );
    assert.throws(
      () => renderGatewaySetconf(plan, { ...gatewayKeys, privateKey: "x" }),
      /gateway privateKey is not/,
    );
    assert.throws(
      () => renderClientWgQuick(plan, "app-1", { ...app1Keys, gatewayPublicKey: "" }),
      /gatewayPublicKey/,
    );
    assert.throws(() => renderClientWgQuick(plan, "app-9", app1Keys), /app-9.*has no client.*app-1, app-2/);
  });

  it("gateway nftables rules", () => {
    golden("gateway.nft", renderGatewayNftables(plan, { interfaceName: "wg0", masquerade: true }));
  });

  it("Kubernetes manifests of both ends", () => {
    const gw = renderGatewayManifests(plan, k8sOptions);
    golden("gateway-k8s.yaml", yamlDocs([gw.secret, gw.rules, gw.deployment, gw.service]));
    const client = renderClientManifests(plan, "app-1", k8sOptions);
    golden("client-app-1-k8s.yaml", yamlDocs([client.secret, client.deployment, ...client.services]));
    assert.deepEqual(client.endpoints, {
      "pg-a": { hostForConsumer: "wg-pg-a.klutch-wireguard.svc.cluster.local", port: 5432 },
      "pg-a2": { hostForConsumer: "wg-pg-a2.klutch-wireguard.svc.cluster.local", port: 5432 },
    });
    // the second 5432 connection gets its own forwarder port behind the same Service port
    assert.deepEqual(
      client.services.map((s) => s.spec.ports[0]),
      [
        { name: "tcp", protocol: "TCP", port: 5432, targetPort: 5432 },
        { name: "tcp", protocol: "TCP", port: 5432, targetPort: 20000 },
      ],
    );
    for (const doc of parseAllDocuments(
      fs.readFileSync(path.join(__dirname, "golden", "client-app-1-k8s.yaml"), "utf8"),
    )) {
      assert.equal(doc.errors.length, 0);
    }
  });

  it("NetworkPolicies: the gateway admits its UDP port from the exposure's sources only, a client TCP from its cluster's pods only", () => {
    const exposed = { ...k8sOptions, gatewayServiceType: "NodePort" as const };
    const exposure = { sourceRanges: ["10.30.0.0/16", "10.40.0.0/16"], internal: true, public: false };
    const gw = renderGatewayNetworkPolicy(51820, { ...exposed, gatewayExposure: exposure });
    const gatewayPod = renderGatewayManifests(plan, exposed).deployment.spec.template.metadata.labels;
    assert.deepEqual(gw.spec.podSelector.matchLabels, gatewayPod, "it selects the gateway pod");
    assert.deepEqual(gw.spec.ingress, [
      {
        from: [{ ipBlock: { cidr: "10.30.0.0/16" } }, { ipBlock: { cidr: "10.40.0.0/16" } }],
        ports: [{ protocol: "UDP", port: 51820 }],
      },
    ]);
    assert.equal(gw.metadata.namespace, k8sOptions.gatewayNamespace);
    // ClusterIP: only the data-service cluster's pods; no exposure known: the port alone is open.
    const inCluster = renderGatewayNetworkPolicy(51820, {
      ...k8sOptions,
      gatewayServiceType: "ClusterIP",
      gatewayExposure: { sourceRanges: [], internal: true, public: false },
    });
    assert.deepEqual(inCluster.spec.ingress[0]?.from, [{ namespaceSelector: {} }]);
    assert.deepEqual(renderGatewayNetworkPolicy(51820, k8sOptions).spec.ingress, [
      { ports: [{ protocol: "UDP", port: 51820 }] },
    ]);

    const client = renderClientNetworkPolicy("app-1", k8sOptions);
    const clientPod = renderClientManifests(plan, "app-1", k8sOptions).deployment.spec.template.metadata
      .labels;
    assert.deepEqual(client.spec.podSelector.matchLabels, clientPod, "it selects app-1's client pod");
    assert.notDeepEqual(
      renderClientNetworkPolicy("app-2", k8sOptions).spec.podSelector,
      client.spec.podSelector,
      "and not app-2's",
    );
    assert.deepEqual(client.spec.ingress, [
      { from: [{ namespaceSelector: {} }], ports: [{ protocol: "TCP" }] },
    ]);
  });

  it("marks workloads skipAwait only when asked, and refuses names Kubernetes would reject", () => {
    const plain = renderClientManifests(plan, "app-1", { ...k8sOptions, skipAwait: false });
    assert.equal(plain.deployment.metadata.annotations, undefined);
    assert.throws(
      () => renderClientManifests(plan, "app-1", { ...k8sOptions, name: "x".repeat(60) }),
      /client name "x{60}-client" must be a DNS-1123 label/,
    );
    // a new key rotation restarts the client pod, the Secret content alone would not
    const rotated = renderClientManifests(plan, "app-1", { ...k8sOptions, keyRotation: "2025" });
    assert.notDeepEqual(
      rotated.deployment.spec.template.metadata.annotations,
      renderClientManifests(plan, "app-1", k8sOptions).deployment.spec.template.metadata.annotations,
    );
  });

  it("gateway VM cloud-init", () => {
    const userData = renderGatewayCloudInit(plan, gatewayKeys);
    golden("gateway-cloud-init.yaml", userData);
    assert.ok(userData.startsWith("#cloud-config\n"));
    const parsed = parse(userData);
    const wgConf = parsed.write_files.find((f: { path: string }) => f.path === "/etc/wireguard/wg0.conf");
    assert.equal(wgConf.permissions, "0600");
    assert.equal(
      wgConf.content,
      renderGatewayWgQuick(plan, gatewayKeys, {
        postUp: ["nft -f /etc/klutch/wireguard.nft"],
        postDown: ["nft delete table inet klutch_wireguard"],
      }),
    );
    assert.deepEqual(parsed.runcmd.at(-1), ["systemctl", "enable", "--now", "wg-quick@wg0"]);
  });
});
