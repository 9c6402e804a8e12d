import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.join(__dirname, "..", "..");
const EXAMPLE = path.join(ROOT, "examples", "network-path", "csharp", "Program.cs");
const DOTNET_SDK = path.join(ROOT, "sdk", "dotnet");

/** The public properties a generated .NET class declares (`public <type> <Name> {`). */
function publicProperties(file: string): Set<string> {
  const text = fs.readFileSync(path.join(DOTNET_SDK, file), "utf8");
  return new Set([...text.matchAll(/public [\w.<>, ?]+ (\w+)\s*\{/g)].map((m) => m[1]!));
}

/**
 * The property names set in the example's `new <Class> { … }` initialisers, per class: the
 * `Name =` at the initialiser's own depth, not those of the initialisers nested in it.
 */
function initialised(source: string): Map<string, Set<string>> {
  const byClass = new Map<string, Set<string>>();
  for (const m of source.matchAll(/new (\w+)(?:\([^)]*\))?\s*\{/g)) {
    let depth = 0;
    let own = "";
    for (let i = m.index + m[0].length - 1; i < source.length; i++) {
      const ch = source[i]!;
      if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) break;
      else if (depth === 1) own += ch;
    }
    const names = [...own.matchAll(/^\s*(\w+) =/gm)].map((n) => n[1]!);
    if (names.length > 0) byClass.set(m[1]!, new Set([...(byClass.get(m[1]!) ?? []), ...names]));
  }
  return byClass;
}

/**
 * The C# example (examples/network-path/csharp/Program.cs) cannot be compiled here (no .NET SDK
 * on this machine), so this checks what a compiler would first: every property it sets and every
 * output it reads is one the generated .NET SDK (sdk/dotnet) declares.
 */
describe("the C# network-path example against the generated .NET SDK (no compiler here)", () => {
  const source = fs.readFileSync(EXAMPLE, "utf8");

  it("sets only properties the SDK's args classes declare", () => {
    const classes: Record<string, string> = {
      TcpProxyArgs: "Network/TcpProxy.cs",
      PortRangeArgs: "Network/Inputs/PortRangeArgs.cs",
      TcpConnectionArgs: "Network/Inputs/TcpConnectionArgs.cs",
    };
    const used = initialised(source);
    assert.deepEqual([...used.get("TcpProxyArgs")!].sort(), [
      "Connections",
      "Kubeconfig",
      "Namespace",
      "PortRange",
      "Replicas",
      "ServiceType",
      "SkipAwait",
    ]);
    assert.deepEqual([...used.keys()].filter((c) => c in classes).sort(), Object.keys(classes).sort());
    for (const [cls, file] of Object.entries(classes)) {
      const declared = publicProperties(file);
      for (const name of used.get(cls)!) assert.ok(declared.has(name), `${cls} has no property ${name}`);
    }
  });

  it("reads only outputs TcpProxy declares", () => {
    const outputs = [...source.matchAll(/proxy\.(\w+)/g)].map((m) => m[1]!);
    assert.deepEqual(outputs, ["ServiceName", "Assignments"]);
    const declared = publicProperties("Network/TcpProxy.cs");
    for (const name of outputs) assert.ok(declared.has(name), `TcpProxy has no output ${name}`);
  });

  it("would notice a property the SDK does not have", () => {
    const wrong = initialised(source.replace("ServiceType =", "ServiceKind =")).get("TcpProxyArgs")!;
    assert.ok(wrong.has("ServiceKind"));
    assert.ok(!publicProperties("Network/TcpProxy.cs").has("ServiceKind"));
  });
});
