import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { BRIDGE_PATHS } from "../../lib/bridge/deployment";
import { toolchainEnv } from "../../host/automation/toolchain";
import { startS3Server, type S3Server } from "../helpers/s3-server";
import { portsFor } from "../helpers/ports";
import { toolchainPulumi } from "../helpers/toolchain-cli";

/**
 * What the bridge Deployment relies on for `klutch:bridgeStateCredentials`
 * (components/bridge/bridge-deployment.ts): the engine it runs reads the S3 backend's credentials
 * from the shared credentials file AWS_SHARED_CREDENTIALS_FILE names, with no key in its
 * environment; and for `bridge.awsRoleArn`, from the web identity EKS hands the pod. The real CLI on a real S3 API (moto on loopback), in an environment with no other
 * source of credentials: no AWS_* keys, no ~/.aws, the instance metadata service off (it would
 * be a request to 169.254.169.254).
 */
describe("the bridge's S3 state credentials as a file (real pulumi CLI, moto's S3; e2e)", function () {
  this.timeout(3 * 60_000);
  const ports = portsFor(__filename);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-s3-credentials-"));
  let s3: S3Server;

  before(async () => {
    s3 = await startS3Server(ports.one());
    await s3.bucket("klutch-bridge-state");
  });
  after(async () => {
    await s3?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  /** `pulumi stack init` of `stack` on the bucket, with only `extra` for credentials. */
  const init = (stack: string, extra: Record<string, string>) => {
    const home = path.join(work, stack);
    fs.mkdirSync(home);
    fs.writeFileSync(path.join(home, "Pulumi.yaml"), "name: bridge-state\nruntime: nodejs\n");
    const base = Object.fromEntries(Object.entries(toolchainEnv()).filter(([k]) => !k.startsWith("AWS_")));
    return spawnSync(toolchainPulumi(base), ["stack", "init", stack, "--non-interactive"], {
      cwd: home,
      encoding: "utf8",
      env: {
        ...base,
        HOME: home,
        PULUMI_HOME: path.join(home, ".pulumi"),
        PULUMI_BACKEND_URL: s3.backendUrl("klutch-bridge-state", "state"),
        PULUMI_CONFIG_PASSPHRASE: "s3-credentials-test",
        PULUMI_SKIP_UPDATE_CHECK: "true",
        AWS_EC2_METADATA_DISABLED: "true",
        ...extra,
      },
    });
  };
  /** The stack checkpoints in the bucket (`<project>/<stack>.json`; the `.bak` beside each left out). */
  const stacksInBucket = async () =>
    (await s3.keys("klutch-bridge-state", "state/.pulumi/stacks/"))
      .filter((k) => k.endsWith(".json"))
      .map((k) => k.replace("state/.pulumi/stacks/", ""));

  it("without credentials the engine cannot use the bucket, and writes nothing to it", async () => {
    const r = init("none", {});
    assert.notEqual(r.status, 0, r.stdout);
    // The AWS SDK's words (aws-sdk-go-v2 config): no source in its chain gave credentials.
    assert.match(r.stderr, /failed to (refresh cached|retrieve) credentials/i, r.stderr);
    assert.deepEqual(await stacksInBucket(), []);
  });

  it("with the file the Deployment mounts (a [default] profile) and only its path in the environment, it makes the stack in the bucket", async () => {
    const file = path.join(work, path.basename(BRIDGE_PATHS.awsCredentials));
    fs.writeFileSync(file, "[default]\naws_access_key_id = test\naws_secret_access_key = test\n", {
      mode: 0o440,
    });
    const r = init("with-file", { AWS_SHARED_CREDENTIALS_FILE: file });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(await stacksInBucket(), ["bridge-state/with-file.json"]);
  });
  it("with what EKS's webhook hands a pod of an annotated ServiceAccount (bridge.awsRoleArn) and no key, it assumes the role through STS and makes the stack", async () => {
    // The projected token's file, and the two variables the webhook sets (lib/bridge/aws-role.ts);
    // STS is moto's too (AWS_ENDPOINT_URL_STS, the SDK's per-service endpoint), which takes any token.
    const token = path.join(work, "token");
    fs.writeFileSync(token, "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a2x1dGNoIn0.c2ln");
    const r = init("with-role", {
      AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/klutch-bridge",
      AWS_WEB_IDENTITY_TOKEN_FILE: token,
      AWS_ENDPOINT_URL_STS: s3.endpoint,
      AWS_REGION: "us-east-1",
    });
    assert.equal(r.status, 0, r.stderr);
    assert.ok((await stacksInBucket()).includes("bridge-state/with-role.json"));
  });
});
