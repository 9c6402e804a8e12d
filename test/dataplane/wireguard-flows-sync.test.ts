import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { clusterEndpoint } from "../../lib/bind/cluster-endpoint";
import { LocalClusters } from "../../host/local-clusters";
import { FLOWS_SYNC_SCRIPT, flowsReaderRules } from "../../network/wireguard/model/flows-sync";
import { emptyPlan } from "../../network/wireguard/model/local-plan";
import { renderGatewayNftables } from "../../network/wireguard/model/render-nftables";
import { kubectl, kubectlApply } from "../helpers/kubectl";

const CLUSTER = "flows-sync";
const NS = "klutch-network";
const FLOWS = "env-wireguard-gateway-flows";
const READER = "klutch-wireguard-gateway";

/**
 * A gateway VM's flows reader (network/wireguard/model/flows-sync.ts) against a real API server: the
 * Python loop as cloud-init installs it, with a real ServiceAccount token whose Role
 * (flowsReaderRules) may get the flows ConfigMap and nothing else. Its reload command checks the
 * gateway filter with every written flows file included (nft -c in a network namespace of its
 * own), as the VM's `nft -f` would load it.
 */
describe("WireGuard gateway VM: the flows reader against a real API server (data plane)", function () {
  this.timeout(5 * 60_000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-flows-sync-"));
  const clusters = new LocalClusters(path.join(work, "clusters"));
  const kc = () => clusters.kubeconfigPath(CLUSTER);
  const dir = path.join(work, "flows");
  const marker = path.join(work, "reloaded");
  const script = path.join(work, "flows-sync.py");
  const rules = path.join(work, "rules.nft");
  let server = "";

  const setFlows = (data: Record<string, string>) =>
    assert.equal(
      kubectlApply(
        kc(),
        JSON.stringify({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: FLOWS, namespace: NS },
          data,
        }),
      ).status,
      0,
    );
  const sync = (name = FLOWS) =>
    spawnSync(
      "python3",
      [
        script,
        "--server",
        server,
        "--namespace",
        NS,
        "--name",
        name,
        "--ca-file",
        path.join(work, "ca.crt"),
        "--token-file",
        path.join(work, "token"),
        "--dir",
        dir,
        "--reload",
        `unshare -n nft -c -f ${rules} && touch ${marker}`,
        "--once",
      ],
      { encoding: "utf8", timeout: 60_000 },
    );
  const files = () => fs.readdirSync(dir).sort();

  before(async () => {
    await clusters.up([CLUSTER]);
    const endpoint = clusterEndpoint(fs.readFileSync(kc(), "utf8"));
    server = endpoint.server;
    fs.writeFileSync(path.join(work, "ca.crt"), endpoint.caPem ?? "");
    kubectl(kc(), ["create", "namespace", NS]);
    kubectl(kc(), ["-n", NS, "create", "serviceaccount", READER]);
    for (const doc of [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: READER, namespace: NS },
        rules: flowsReaderRules(FLOWS),
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: READER, namespace: NS },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: READER },
        subjects: [{ kind: "ServiceAccount", name: READER, namespace: NS }],
      },
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "other", namespace: NS },
        data: { secret: "not yours" },
      },
    ])
      assert.equal(kubectlApply(kc(), JSON.stringify(doc)).status, 0);
    fs.writeFileSync(
      path.join(work, "token"),
      kubectl(kc(), ["-n", NS, "create", "token", READER, "--duration=1h"]).trim(),
      { mode: 0o600 },
    );
    fs.writeFileSync(script, FLOWS_SYNC_SCRIPT, { mode: 0o755 });
    // The VM's filter: the gateway's table, including the files the reader writes.
    fs.writeFileSync(
      rules,
      renderGatewayNftables(emptyPlan(), {
        interfaceName: "wg0",
        masquerade: true,
        configPort: 51821,
        include: `${dir}/flows-*.nft`,
      }),
    );
  });

  after(async () => {
    await clusters.down();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("writes the bridge's keys and reloads the filter, which loads with them; other keys are never written", () => {
    setFlows({
      "flows-100.96.0.2.nft":
        "add element inet klutch_wireguard flows { 100.96.0.2 . 10.0.0.5 . 5432 }\nadd element inet klutch_wireguard services { 10.0.0.5 . 5432 }\n",
      "client-100.96.0.2.conf": "forward 5432 10.0.0.5 5432\n",
      "evil.sh": "rm -rf /\n",
    });
    const r = sync();
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(files(), ["client-100.96.0.2.conf", "flows-100.96.0.2.nft"]);
    assert.equal(
      fs.readFileSync(path.join(dir, "client-100.96.0.2.conf"), "utf8"),
      "forward 5432 10.0.0.5 5432\n",
    );
    assert.ok(fs.existsSync(marker), `the filter was reloaded (and loads): ${r.stdout}${r.stderr}`);
  });

  it("an unchanged ConfigMap reloads nothing; a removed key's file goes, a changed one is rewritten", () => {
    fs.rmSync(marker);
    assert.equal(sync().status, 0);
    assert.ok(!fs.existsSync(marker), "nothing changed, nothing reloaded");
    setFlows({
      "flows-100.96.0.3.nft": "add element inet klutch_wireguard flows { 100.96.0.3 . 10.0.0.6 . 5432 }\n",
      "client-100.96.0.2.conf": "forward 20000 10.0.0.6 5432\n",
    });
    const r = sync();
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(files(), ["client-100.96.0.2.conf", "flows-100.96.0.3.nft"]);
    assert.equal(
      fs.readFileSync(path.join(dir, "client-100.96.0.2.conf"), "utf8"),
      "forward 20000 10.0.0.6 5432\n",
    );
    assert.ok(fs.existsSync(marker));
  });

  it("the token reads that ConfigMap only: another is refused by the API server (403), and nothing is touched", () => {
    const before = files();
    const r = sync("other");
    assert.equal(r.status, 1);
    assert.match(r.stderr, /cannot sync klutch-network\/other from https:\/\/.*: HTTP Error 403: Forbidden/);
    assert.deepEqual(files(), before);
  });
});
