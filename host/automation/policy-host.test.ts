import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { launcherScript, policyPackHost } from "./policy-host";

describe("the policy pack launcher (what --policy-pack gets on pulumi 3.276.0)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-policy-host-"));
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  /** A pack whose "run-policy-pack" prints where it ran and with which arguments. */
  const fakePack = (name: string): string => {
    const pack = path.join(root, name);
    const fake = path.join(pack, "node_modules", "@pulumi", "pulumi", "cmd", "run-policy-pack");
    fs.mkdirSync(fake, { recursive: true });
    fs.writeFileSync(path.join(pack, "PulumiPolicy.yaml"), "runtime: nodejs\n");
    fs.writeFileSync(
      path.join(fake, "index.js"),
      "console.log(JSON.stringify({ cwd: process.cwd(), args: process.argv.slice(2) }));\n",
    );
    return pack;
  };

  it("runs the pack's run-policy-pack in the pack's directory with the engine's address, the last argument", () => {
    const pack = fakePack("it's a pack");
    const launcher = policyPackHost(pack, root);
    assert.ok(fs.statSync(launcher).mode & 0o100, "executable");
    assert.equal(
      fs.readFileSync(path.join(path.dirname(launcher), "PulumiPolicy.yaml"), "utf8"),
      "runtime: nodejs\n",
    );
    // As the engine starts it: log flags first, the address last, in the program's directory.
    const out = execFileSync(launcher, ["--logtostderr", "-v=9", "127.0.0.1:4242"], {
      cwd: os.tmpdir(),
      encoding: "utf8",
    });
    assert.deepEqual(JSON.parse(out), { cwd: fs.realpathSync(pack), args: ["127.0.0.1:4242", "."] });
  });

  it("gives each pack its own launcher and rewrites it only when it changes", () => {
    const a = policyPackHost(fakePack("a"), root);
    const b = policyPackHost(fakePack("b"), root);
    assert.notEqual(path.dirname(a), path.dirname(b));
    const before = fs.statSync(a).mtimeMs;
    assert.equal(policyPackHost(path.join(root, "a"), root), a);
    assert.equal(fs.statSync(a).mtimeMs, before);
    assert.equal(fs.readFileSync(a, "utf8"), launcherScript(path.join(root, "a")));
  });

  it("refuses a directory that is not a policy pack", () => {
    assert.throws(() => policyPackHost(root, root), /has no PulumiPolicy\.yaml/);
  });
});
