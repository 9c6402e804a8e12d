import { strict as assert } from "node:assert";
import type { EnvironmentConfig } from "../../lib/config/schema";
import type { CrossplanePlan } from "../../lib/crossplane/crossplane-plan";
import { crossplaneSource } from "./crossplane-source";

const config = {
  crossplane: { chartRepository: "https://charts.crossplane.io/stable" },
} as unknown as EnvironmentConfig;
const plan = (toolchainChart: boolean) =>
  ({ run: { kind: "chart" }, version: "2.4.0", toolchainChart }) as unknown as CrossplanePlan;

describe("where the Crossplane chart comes from", () => {
  it("asks the toolchain only when the chart is the toolchain's: a released plugin has none to ask", () => {
    let asked = 0;
    const toolchain = () => {
      asked++;
      throw new Error("ENOENT: no such file or directory, open '…/host/toolchain/versions.env'");
    };
    assert.deepEqual(crossplaneSource(config, plan(false), "/project", toolchain), {
      ok: true,
      source: { chart: { repository: "https://charts.crossplane.io/stable" } },
    });
    assert.equal(asked, 0);
    const local = crossplaneSource(config, plan(true), "/project", toolchain);
    assert.equal(asked, 1);
    assert.deepEqual(local, {
      ok: false,
      setting: "controlPlane.infrastructure",
      message: "ENOENT: no such file or directory, open '…/host/toolchain/versions.env'",
    });
  });
});
