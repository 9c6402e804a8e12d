import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { pinnedVersion, standing, SUPPORT_WINDOWS, type SupportWindow } from "./support-windows";
import { versionsMarkdown, versionsReport } from "./versions-table";

const root = path.resolve(__dirname, "..", "..");

describe("the pinned parts and their upstream support (npm run versions, docs/versions.md)", () => {
  it("has a row for every version host/toolchain/versions.env pins, but those that follow another", () => {
    const env = fs.readFileSync(path.join(root, "host", "toolchain", "versions.env"), "utf8");
    const keys = [...env.matchAll(/^([A-Z_]+_VERSION)=/gm)].map((m) => m[1]);
    // The dotnet generator's codegen and the provider's module address follow the Pulumi and
    // pulumi-kubernetes rows.
    const follows = new Set(["PULUMI_DOTNET_CODEGEN_VERSION", "PULUMI_KUBERNETES_MODULE_VERSION"]);
    const rows = new Set(SUPPORT_WINDOWS.flatMap((w) => ("env" in w.pin ? [w.pin.env] : [])));
    assert.deepEqual(
      keys.filter((k) => k && !follows.has(k) && !rows.has(k)),
      [],
    );
  });

  it("was read for the versions pinned now: a moved pin needs its row looked up again", () => {
    for (const w of SUPPORT_WINDOWS) assert.equal(pinnedVersion(w.pin), w.checkedFor, w.part);
  });

  it("says past its end, ends soon, or supported, by the day it is asked", () => {
    const w: SupportWindow = {
      part: "x",
      pin: { fixed: "1" },
      checkedFor: "1",
      policy: "",
      ends: "2027-06-01",
      move: "",
    };
    assert.deepEqual(standing(w, "2026-12-02", "1"), { past: false, text: "supported until 2027-06-01" });
    assert.deepEqual(standing(w, "2027-05-02", "1"), { past: false, text: "ends in 30 days" });
    assert.deepEqual(standing(w, "2027-06-02", "1"), { past: true, text: "PAST ITS END since 2027-06-01" });
    assert.match(standing(w, "2026-12-02", "2").text, /^UNCHECKED: the row was read for 1/);
    assert.equal(standing({ ...w, ends: undefined, ended: "superseded" }, "2026-12-02", "1").past, true);
  });

  it("marks each part past its end in the report and counts them", () => {
    const report = versionsReport("2026-12-02");
    const marked = report.text.split("\n").filter((l) => l.startsWith("✗"));
    assert.equal(marked.length, report.pastEnd);
    assert.ok(
      marked.some((l) =>
        /^✗ Crossplane 1\.20 \(process core, upstream Klutch's line\)\s+1\.20\.11\s+PAST ITS END/.test(l),
      ),
    );
    assert.ok(report.text.split("\n").some((l) => /^✓ Crossplane\s+2\.4\.0/.test(l)));
    assert.ok(report.text.split("\n").some((l) => /^✓ Kubernetes \(local clusters\)\s+1\.37\.2/.test(l)));
  });

  it("is the table docs/versions.md shows (cell by cell: prettier pads the columns)", () => {
    const cells = (text: string) =>
      text
        .split("\n")
        .filter((l) => l.startsWith("|") && !/^\|[\s|-]+\|$/.test(l))
        .map((l) =>
          l
            .split("|")
            .slice(1, -1)
            .map((c) => c.trim()),
        );
    const docs = fs.readFileSync(path.join(root, "docs", "versions.md"), "utf8");
    assert.deepEqual(
      cells(docs),
      cells(versionsMarkdown()),
      "paste `npm run versions -- --markdown` into docs/versions.md",
    );
  });
});
