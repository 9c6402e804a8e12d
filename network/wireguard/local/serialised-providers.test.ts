import { strict as assert } from "node:assert";
import { runSerialized } from "../../../test/helpers/dynamic-provider";
import { localAllowedHostsProvider } from "./allowed-hosts-provider";
import { localWireguardClientProvider } from "./client-provider";
import { localTcpForwarderProvider } from "./forwarder-provider";
import type { LocalAllowedHostsInputs, LocalTcpForwarderInputs, LocalWireguardClientOutputs } from "./types";

/**
 * The providers' helpers live in several files of this folder; these run each serialised
 * provider, as the engine's provider host does, against a namespace and state directory that do
 * not exist, so every helper they reach must have travelled with them.
 */

const NO_NETNS = "klutch-no-such-netns";
const NO_DIR = "/nonexistent/klutch-local-wireguard";

const client: LocalWireguardClientOutputs = {
  gatewayDir: NO_DIR,
  dataNetns: NO_NETNS,
  gatewayIfname: "kwg-none",
  tunnelCidr: "100.96.0.0/24",
  gatewayAddress: "100.96.0.1/24",
  listenPort: 51820,
  gatewayFilter: "",
  nftTable: "klutch_none",
  linkBase: "10.250.0.0",
  linkCount: 4,
  group: "team-a/none",
  netns: NO_NETNS,
  ifname: "kwc-none",
  linkIfname: "kwl-none",
  privateKey: "unused",
  publicKey: "unused",
  tunnelAddress: "100.96.0.2",
  gatewayPublicKey: "unused",
  endpoint: "10.250.0.1:51820",
};

const hosts: LocalAllowedHostsInputs = {
  dataNetns: NO_NETNS,
  gatewayIfname: "kwg-none",
  nftTable: "klutch_none",
  netns: NO_NETNS,
  ifname: "kwc-none",
  gatewayPublicKey: "unused",
  allowedIps: ["10.0.0.5/32"],
  flows: ["100.96.0.2 . 10.0.0.5 . 5432"],
  services: ["10.0.0.5 . 5432"],
};

const forwarder: LocalTcpForwarderInputs = {
  name: "none",
  dir: NO_DIR,
  netns: NO_NETNS,
  listenAddress: "127.0.0.1",
  listenPort: 20000,
  host: "10.0.0.5",
  port: 5432,
};

describe("serialised local WireGuard providers run without this project's files", () => {
  it("LocalWireguardClient: a client whose daemons are gone is a change (healed by the update)", async () => {
    const out = await runSerialized(
      localWireguardClientProvider,
      `async (p) => p.diff("id", ${JSON.stringify(client)}, ${JSON.stringify(client)})`,
    );
    assert.deepEqual(out, { changes: true });
  });

  it("LocalWireguardAllowedHosts: flows the gateway no longer has are put back", async () => {
    const out = await runSerialized(
      localAllowedHostsProvider,
      `async (p) => p.diff("id", ${JSON.stringify(hosts)}, ${JSON.stringify(hosts)})`,
    );
    assert.deepEqual(out, { changes: true });
  });

  it("LocalTcpForwarder: a forwarder whose process is gone reads as gone", async () => {
    const out = await runSerialized(
      localTcpForwarderProvider,
      `async (p) => p.read("id", ${JSON.stringify(forwarder)})`,
    );
    assert.deepEqual(out, { id: "", props: {} });
  });
});
