import { strict as assert } from "node:assert";
import { awsRoleProblem } from "./aws-role";

const s3 = { kind: "backend" as const, url: "s3://klutch-bridge-state?region=eu-central-1" };

describe("the bridge's IAM role for its S3 state (bridge.awsRoleArn, pure)", () => {
  it("takes an IAM role's ARN in any partition, with or without a path", () => {
    for (const arn of [
      "arn:aws:iam::123456789012:role/klutch-bridge",
      "arn:aws:iam::123456789012:role/teams/klutch/bridge+state@eu",
      "arn:aws-cn:iam::123456789012:role/klutch-bridge",
      "arn:aws-us-gov:iam::123456789012:role/klutch-bridge",
    ])
      assert.equal(awsRoleProblem(arn, { deployed: true, local: false, state: s3 }), undefined, arn);
  });

  it("refuses what is no role's ARN: a user, another service, a short account, no name", () => {
    for (const arn of [
      "arn:aws:iam::123456789012:user/klutch",
      "arn:aws:sts::123456789012:role/klutch",
      "arn:aws:iam::12345:role/klutch",
      "arn:aws:iam::123456789012:role/",
      "klutch-bridge",
    ])
      assert.match(
        awsRoleProblem(arn, { deployed: true, local: false, state: s3 }) ?? "",
        /which is no IAM role's ARN/,
        arn,
      );
  });

  it("is only for a deployed bridge off local clusters, whose state is in S3", () => {
    const arn = "arn:aws:iam::123456789012:role/klutch-bridge";
    assert.match(
      awsRoleProblem(arn, { deployed: true, local: true, state: s3 }) ?? "",
      /no EKS pod identity webhook/,
    );
    assert.match(
      awsRoleProblem(arn, { deployed: false, local: false, state: s3 }) ?? "",
      /deploys no bridge/,
    );
    assert.match(
      awsRoleProblem(arn, {
        deployed: true,
        local: false,
        state: { kind: "backend", url: "azblob://state" },
      }) ?? "",
      /not in S3 \(bridge\.state azblob:\/\/state\)/,
    );
    assert.match(
      awsRoleProblem(arn, { deployed: true, local: false }) ?? "",
      /not in S3 \(bridge\.state unset\)/,
    );
  });
});
