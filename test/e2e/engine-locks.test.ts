import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import { undeletedLock } from "../../lib/bridge/locks";
import { StackLocks } from "../../programs/bridge/stack-locks";
import { toolchainEnv } from "../../host/automation/toolchain";
import { startS3Server, type S3Server } from "../helpers/s3-server";
import { portsFor } from "../helpers/ports";
import { toolchainPulumiCommand } from "../helpers/toolchain-cli";

const provider: pulumi.dynamic.ResourceProvider = {
  create: (inputs: { v: number }) => Promise.resolve({ id: "r", outs: inputs }),
};

class Plain extends pulumi.dynamic.Resource {
  constructor(name: string) {
    super(provider, name, { v: 1 }, {});
  }
}

/**
 * An S3 endpoint in front of moto that answers every DELETE of a stack lock with 503 while
 * `refusing` is set, as a store that is briefly unavailable would: the engine's deferred Unlock
 * fails after its SDK's retries, and the lock stays in the bucket.
 */
function refusingLockDeletes(target: number): {
  server: http.Server;
  refuse(on: boolean): void;
  refused: () => number;
} {
  let refusing = false;
  let refused = 0;
  const server = http.createServer((req, res) => {
    if (refusing && req.method === "DELETE" && req.url?.includes("/.pulumi/locks/")) {
      refused++;
      res.writeHead(503, { "content-type": "application/xml" });
      res.end("<Error><Code>ServiceUnavailable</Code><Message>refused by the test</Message></Error>");
      return;
    }
    const upstream = http.request(
      { host: "127.0.0.1", port: target, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  return { server, refuse: (on) => (refusing = on), refused: () => refused };
}

/**
 * programs/bridge/stack-locks.ts afterRun against the real engine on an S3 backend: the CLI's
 * own words when it could not delete its lock are recognised, and a leader clears that lock, so
 * the stack's next run is not refused as "currently locked".
 */
describe("a lock the engine could not delete, on an S3 backend (e2e)", function () {
  this.timeout(5 * 60_000);

  const ports = portsFor(__filename);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-engine-locks-"));
  const env = toolchainEnv();
  let s3: S3Server;
  let front: ReturnType<typeof refusingLockDeletes>;
  let stack: Stack;

  before(async () => {
    s3 = await startS3Server(ports.one());
    await s3.bucket("state");
    const frontPort = ports.one();
    front = refusingLockDeletes(s3.port);
    await new Promise<void>((r) => front.server.listen(frontPort, "127.0.0.1", r));
    stack = await LocalWorkspace.createOrSelectStack(
      {
        stackName: "np-locks",
        projectName: "klutch-network-paths",
        program: () => {
          new Plain("r");
          return Promise.resolve({});
        },
      },
      {
        workDir: work,
        pulumiCommand: await toolchainPulumiCommand(env),
        envVars: {
          ...s3.env,
          PATH: env.PATH ?? "",
          PULUMI_BACKEND_URL: s3.backendUrl("state", "e2e").replace(String(s3.port), String(frontPort)),
          PULUMI_CONFIG_PASSPHRASE: "engine-locks-test",
          PULUMI_SKIP_UPDATE_CHECK: "true",
        },
      },
    );
  });

  after(async () => {
    front?.server.close();
    await s3?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  const locks = () => s3.keys("state", "e2e/.pulumi/locks/");

  it("the CLI's message names the lock it left; a leader clears it and the next run works", async () => {
    front.refuse(true);
    const result = await stack.up({ color: "never" });
    front.refuse(false);
    assert.ok(front.refused() > 0, "the engine tried to delete its lock");
    const left = await locks();
    assert.equal(left.length, 1, "the update's lock stays in the bucket");
    const named = undeletedLock(result.stderr);
    assert.ok(named, `the CLI said it could not delete its lock:\n${result.stderr}`);
    assert.ok(named.url.split("?")[0] === `s3://state/${left[0]}`, `${named.url} names ${left[0]}`);
    await assert.rejects(
      stack.up({ color: "never" }),
      /currently locked/,
      "without clearing, the next run is refused",
    );

    const said: string[] = [];
    const leader = new StackLocks({
      backendDir: undefined,
      project: "klutch-network-paths",
      leaderElected: true,
    });
    await leader.afterRun("np-locks", stack, result.stderr, (_level, msg) => void said.push(msg));
    assert.deepEqual(said, ["the engine could not delete its lock when the run ended; cleared it"]);
    assert.deepEqual(await locks(), []);
    const next = await stack.up({ color: "never" });
    assert.equal(undeletedLock(next.stderr), undefined);
    assert.deepEqual(await locks(), []);
  });
});
