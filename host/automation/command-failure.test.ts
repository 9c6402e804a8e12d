import { strict as assert } from "node:assert";
import { CommandError } from "@pulumi/pulumi/automation";
import { failureText } from "./command-failure";

describe("npm run pulumi: what a failed command prints", () => {
  it("a failed engine run: its stderr and one line, not the streamed output again", () => {
    const streamed = "Previewing update (local):\nDiagnostics:\n  error: Invalid configuration for stack";
    // The Automation API's CommandError, as it carries a failed run (message = the whole result).
    const err = Object.assign(Object.create(CommandError.prototype) as Error, {
      name: "CommandError",
      message: `code: 255\\n stdout: ${streamed}\\n stderr: warning: x\\n err?: Error: Command failed`,
      commandResult: { stdout: streamed, stderr: "warning: x\n", code: 255 },
    });
    const text = failureText(err);
    assert.equal(text, "warning: x\nthe engine run failed; its diagnostics are above.");
    assert.doesNotMatch(text, /Invalid configuration/);
  });

  it("any other error: its message", () => {
    assert.equal(
      failureText(new Error("--policy-pack x: no PulumiPolicy.yaml")),
      "--policy-pack x: no PulumiPolicy.yaml",
    );
    assert.equal(failureText("plain"), "plain");
  });
});
