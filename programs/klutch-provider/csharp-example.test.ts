import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.join(__dirname, "..", "..");
const DOTNET_SDK = path.join(ROOT, "sdk", "dotnet");

/**
 * The public properties a generated .NET class declares (`public <type> <Name> {`): of the file's
 * class `cls`, from its declaration to the next class's, since a resource's file also holds its
 * args class.
 */
function publicProperties(file: string, cls: string): Set<string> {
  const text = fs.readFileSync(path.join(DOTNET_SDK, file), "utf8");
  const start = text.search(new RegExp(`class ${cls}\\b`));
  assert.ok(start >= 0, `${file} declares no class ${cls}`);
  const rest = text.slice(start + 1);
  const next = rest.search(/\bclass \w+/);
  const body = next >= 0 ? rest.slice(0, next) : rest;
  return new Set([...body.matchAll(/public [\w.<>, ?]+ (\w+)\s*\{/g)].map((m) => m[1]!));
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

interface CsharpExample {
  /** examples/<this>/csharp/Program.cs */
  example: string;
  /** The args classes it initialises, each with the SDK file that declares it. */
  classes: Record<string, string>;
  /** The properties its component's args are given, sorted. */
  componentArgs: [cls: string, properties: string[]];
  /** The variable holding the component, the component's class and file, and the outputs read. */
  outputs: { variable: string; cls: string; file: string; names: string[] };
}

const EXAMPLES: CsharpExample[] = [
  {
    example: "network-path",
    classes: {
      TcpProxyArgs: "Network/TcpProxy.cs",
      PortRangeArgs: "Network/Inputs/PortRangeArgs.cs",
      TcpConnectionArgs: "Network/Inputs/TcpConnectionArgs.cs",
    },
    componentArgs: [
      "TcpProxyArgs",
      ["Connections", "Kubeconfig", "Namespace", "PortRange", "Replicas", "ServiceType", "SkipAwait"],
    ],
    outputs: {
      variable: "proxy",
      cls: "TcpProxy",
      file: "Network/TcpProxy.cs",
      names: ["ServiceName", "Assignments"],
    },
  },
  {
    example: "environment",
    classes: {
      EnvironmentArgs: "Environment.cs",
      ControlPlaneArgs: "Inputs/ControlPlaneArgs.cs",
      AppClusterArgs: "Inputs/AppClusterArgs.cs",
      KubeconfigSourceArgs: "Inputs/KubeconfigSourceArgs.cs",
      NetworkConnectorArgs: "Inputs/NetworkConnectorArgs.cs",
      BindSettingsArgs: "Inputs/BindSettingsArgs.cs",
      CrossplaneSettingsArgs: "Inputs/CrossplaneSettingsArgs.cs",
    },
    componentArgs: ["EnvironmentArgs", ["AppClusters", "Bind", "ControlPlane", "Crossplane", "Environment"]],
    outputs: {
      variable: "environment",
      cls: "Environment",
      file: "Environment.cs",
      names: ["BindExternalAddress", "ExportedApis"],
    },
  },
];

/**
 * The C# examples (examples/<name>/csharp/Program.cs) cannot be compiled here (no .NET SDK on
 * this machine), so this checks what a compiler would first: every property each sets and every
 * output it reads is one the generated .NET SDK (sdk/dotnet) declares on that class.
 */
for (const ex of EXAMPLES) {
  describe(`the C# ${ex.example} example against the generated .NET SDK (no compiler here)`, () => {
    const source = fs.readFileSync(path.join(ROOT, "examples", ex.example, "csharp", "Program.cs"), "utf8");

    it("sets only properties the SDK's args classes declare", () => {
      const used = initialised(source);
      const [component, properties] = ex.componentArgs;
      assert.deepEqual([...used.get(component)!].sort(), properties);
      assert.deepEqual(
        [...used.keys()].filter((c) => c in ex.classes).sort(),
        Object.keys(ex.classes).sort(),
      );
      for (const [cls, file] of Object.entries(ex.classes)) {
        const declared = publicProperties(file, cls);
        for (const name of used.get(cls)!) assert.ok(declared.has(name), `${cls} has no property ${name}`);
      }
    });

    it(`reads only outputs ${ex.outputs.cls} declares`, () => {
      const { variable, cls, file, names } = ex.outputs;
      const read = [...source.matchAll(new RegExp(`\\b${variable}\\.(\\w+)`, "g"))].map((m) => m[1]!);
      assert.deepEqual(read, names);
      const declared = publicProperties(file, cls);
      for (const name of read) assert.ok(declared.has(name), `${cls} has no output ${name}`);
    });
  });
}

describe("the C# examples' check itself", () => {
  it("would notice a property the SDK does not have, and an output of the args class read as the resource's", () => {
    const source = fs.readFileSync(
      path.join(ROOT, "examples", "network-path", "csharp", "Program.cs"),
      "utf8",
    );
    const wrong = initialised(source.replace("ServiceType =", "ServiceKind =")).get("TcpProxyArgs")!;
    assert.ok(wrong.has("ServiceKind"));
    assert.ok(!publicProperties("Network/TcpProxy.cs", "TcpProxyArgs").has("ServiceKind"));
    // Environment.cs holds both classes: an args property is no output of the resource.
    assert.ok(publicProperties("Environment.cs", "EnvironmentArgs").has("ControlPlane"));
    assert.ok(!publicProperties("Environment.cs", "Environment").has("ControlPlane"));
  });
});
