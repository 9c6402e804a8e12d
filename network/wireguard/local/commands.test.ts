import { strict as assert } from "node:assert";
import * as pulumi from "@pulumi/pulumi";
import { runSerialized } from "../../../test/helpers/dynamic-provider";
import { localAllowedHostsProvider } from "./allowed-hosts-provider";
import { localWireguardClientProvider } from "./client-provider";
import { inNs, sh } from "./commands";
import { localTcpForwarderProvider } from "./forwarder-provider";

describe("local WireGuard commands: one command helper, captured by each serialised provider", () => {
  it("sh and inNs run from the serialised text, as the engine's provider host runs them", async () => {
    const out = await runSerialized(
      { sh, inNs },
      `async (p) => {
        let inNsError = "";
        try { p.inNs("klutch-no-such-netns", ["true"]); } catch (e) { inNsError = e.message; }
        return { echo: p.sh(["echo", "captured"]), env: p.sh(["env"]), inNsError,
                 allowed: p.inNs("klutch-no-such-netns", ["true"], { allowFail: true }) };
      }`,
    );
    assert.deepEqual(out, {
      echo: "captured\n",
      // PATH only: no secret of the engine's environment reaches a command.
      env: `PATH=${process.env.PATH}\n`,
      inNsError: (out as { inNsError: string }).inNsError,
      allowed: "",
    });
    assert.match(
      (out as { inNsError: string }).inNsError,
      /^ip netns exec klutch-no-such-netns true exited \d+: .*klutch-no-such-netns/,
    );
  });

  for (const [name, provider] of [
    ["LocalWireguardClient", localWireguardClientProvider],
    ["LocalWireguardAllowedHosts", localAllowedHostsProvider],
    ["LocalTcpForwarder", localTcpForwarderProvider],
  ] as const) {
    it(`${name}: the helper's text appears once in its serialised provider`, async () => {
      const { text } = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });
      // The transpiler decides the spacing (esbuild prints `["ip","netns",...]`), so match the tokens.
      assert.equal(text.match(/\[\s*"ip",\s*"netns",\s*"exec",\s*ns,\s*\.\.\.argv\s*\]/g)?.length, 1);
    });
  }
});
