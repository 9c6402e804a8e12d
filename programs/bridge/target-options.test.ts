import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Command } from "commander";
import { addTargetOptions, targetFromOptions } from "./target-options";

/** The flags as the bridge and the preview parse them: one command each, same options. */
function parse(argv: string[]) {
  const cmd = addTargetOptions(new Command()).exitOverride();
  cmd.parse(argv, { from: "user" });
  return cmd.opts<Record<string, string | boolean | undefined>>();
}

describe("bridge and preview: the target flags", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-target-"));
  const kubeconfig = path.join(dir, "kubeconfig");
  fs.writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\n");
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("defaults to local HAProxy processes on 127.0.0.1 in 22000-22999", () => {
    assert.deepEqual(targetFromOptions(parse([]), "/state"), {
      kind: "local",
      stateDir: "/state",
      bindAddress: "127.0.0.1",
      portRange: { from: 22000, to: 22999 },
    });
  });

  it("kubernetes: the data plane's kubeconfig, namespace, Service type and exposure", () => {
    const t = targetFromOptions(
      parse([
        "--target=kubernetes",
        `--data-plane-kubeconfig=${kubeconfig}`,
        "--service-type=NodePort",
        "--allowed-sources=10.1.0.0/16,192.168.0.0/24",
        "--skip-await",
      ]),
      "/state",
    );
    assert.equal(t.kind, "kubernetes");
    if (t.kind !== "kubernetes") return;
    assert.equal(t.namespace, "klutch-network");
    assert.equal(t.serviceType, "NodePort");
    assert.equal(t.kubeconfig, "apiVersion: v1\nkind: Config\n");
    assert.deepEqual(t.exposure, {
      sourceRanges: ["10.1.0.0/16", "192.168.0.0/24"],
      internal: true,
      public: false,
    });
    assert.equal(t.skipAwait, true);
  });

  it("bad flags fail with one message naming the flag and what to do", () => {
    const cases: [string[], RegExp][] = [
      [["--port-range=30000-20000"], /--port-range "30000-20000" must be FROM-TO within 1-65535/],
      [["--target=cloud"], /--target "cloud" is not one of local, kubernetes/],
      [["--target=kubernetes"], /--target kubernetes needs --data-plane-kubeconfig/],
      [
        ["--target=kubernetes", `--data-plane-kubeconfig=${kubeconfig}`, "--allowed-sources=0.0.0.0/0"],
        /--allowed-sources 0\.0\.0\.0\/0 admits every address; use --public-endpoint/,
      ],
      [
        [
          "--target=kubernetes",
          `--data-plane-kubeconfig=${kubeconfig}`,
          "--public-endpoint",
          "--allowed-sources=10.0.0.0/8",
        ],
        /--public-endpoint admits every address; drop --allowed-sources/,
      ],
      [
        ["--target=kubernetes", `--data-plane-kubeconfig=${kubeconfig}`, "--dedicated-cpus=0"],
        /--dedicated-cpus "0"/,
      ],
    ];
    for (const [argv, message] of cases)
      assert.throws(() => targetFromOptions(parse(argv), "/state"), message);
  });
});
