import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import type { Stack } from "@pulumi/pulumi/automation";
import { withEngineTmp } from "../../host/automation/engine-tmp";
import { inlineStack } from "../helpers/inline-stack";

/** A kubeconfig with a client key, as the provider is given one; its server is a loopback port nothing serves. */
const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: { server: "https://127.0.0.1:1", insecure-skip-tls-verify: true }
users:
- name: u
  user: { token: engine-tmp-test-token }
contexts:
- name: c
  context: { cluster: c, user: u }
current-context: c
`;

const kubeconfigFiles = (dir: string) => fs.readdirSync(dir).filter((f) => f.startsWith("kubeconfig"));

/**
 * host/automation/engine-tmp.ts against the real engine and the real Kubernetes provider: the
 * provider writes each kubeconfig it is configured with to a temporary file it never removes
 * (pulumi-kubernetes provider.go writeKubeconfigToFile); in a directory of the engine's own,
 * that file goes when the run ends. Both halves: without it, the file stays.
 */
describe("the engine's own temporary directory (real engine, Kubernetes provider; e2e)", function () {
  this.timeout(3 * 60_000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-engine-tmp-"));
  /** What the runs see as the machine's temporary directory. */
  const parent = path.join(work, "tmp");
  let stack: Stack;

  before(async () => {
    fs.mkdirSync(parent);
    stack = await inlineStack({
      projectName: "engine-tmp",
      stackName: "engine-tmp",
      workDir: work,
      passphrase: "engine-tmp-test",
      program: () => {
        // Configured on every preview and update (the engine configures each provider it loads).
        new k8s.Provider("cluster", { kubeconfig: KUBECONFIG, suppressHelmHookWarnings: true });
        return Promise.resolve({});
      },
    });
  });
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  it("without it, the provider leaves the kubeconfig, client credentials and all, in the temporary directory", async () => {
    stack.workspace.envVars.TMPDIR = parent;
    try {
      await stack.preview({ color: "never" });
    } finally {
      delete stack.workspace.envVars.TMPDIR;
    }
    const left = kubeconfigFiles(parent);
    assert.ok(left.length >= 1, `no kubeconfig file in ${parent}: ${fs.readdirSync(parent).join(", ")}`);
    assert.match(fs.readFileSync(path.join(parent, left[0]!), "utf8"), /engine-tmp-test-token/);
    for (const f of fs.readdirSync(parent)) fs.rmSync(path.join(parent, f), { recursive: true });
  });

  it("with it, the engine writes into a directory of its own, which is gone after the run, and TMPDIR is as it was", async () => {
    stack.workspace.envVars.TMPDIR = "/outer";
    let during: string[] = [];
    await withEngineTmp(
      stack.workspace,
      async () => {
        const own = stack.workspace.envVars.TMPDIR!;
        assert.equal(path.dirname(own), parent);
        assert.equal(fs.statSync(own).mode & 0o777, 0o700);
        await stack.up({ color: "never" });
        during = kubeconfigFiles(own);
      },
      parent,
    );
    assert.ok(during.length >= 1, "the provider wrote no kubeconfig into the engine's directory");
    assert.deepEqual(fs.readdirSync(parent), []);
    assert.equal(stack.workspace.envVars.TMPDIR, "/outer");
    delete stack.workspace.envVars.TMPDIR;
  });

  it("a failed run leaves nothing either", async () => {
    await assert.rejects(
      withEngineTmp(
        stack.workspace,
        async () => {
          await stack.preview({ color: "never" });
          throw new Error("the run failed");
        },
        parent,
      ),
      /the run failed/,
    );
    assert.deepEqual(fs.readdirSync(parent), []);
    assert.equal(stack.workspace.envVars.TMPDIR, undefined);
  });
});
