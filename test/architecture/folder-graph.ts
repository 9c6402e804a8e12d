/**
 * Folders as a graph: an edge from a folder to each other folder one of its modules imports at
 * run time or for its types (a spec's lazy plug-in loaders aside). Tests (`*.test.ts`) are left out: a test may import what it tests from anywhere.
 */

/** The part of dependency-cruiser's module records this reads. */
export interface CruisedModule {
  source: string;
  dependencies: { resolved: string; dependencyTypes: string[] }[];
}

const isTest = (file: string) => file.endsWith(".test.ts");
const PLUGIN_SPEC = /^network\/[^/]+\/model\/spec\.ts$/;
const folderOf = (file: string) => (file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : ".");

export function folderGraph(modules: readonly CruisedModule[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const m of modules) {
    if (!m.source.endsWith(".ts") || isTest(m.source)) continue;
    const from = folderOf(m.source);
    const out = graph.get(from) ?? new Set<string>();
    graph.set(from, out);
    for (const d of m.dependencies) {
      if (!d.dependencyTypes.includes("local")) continue;
      // An implementation's spec lazily requires its own Pulumi side: a plug-in loader that
      // loads nothing until called (.dependency-cruiser.cjs plugin-loaders keeps it to that).
      if (d.dependencyTypes.includes("require") && PLUGIN_SPEC.test(m.source)) continue;
      if (!d.resolved.endsWith(".ts") || isTest(d.resolved)) continue;
      const to = folderOf(d.resolved);
      if (to !== from) out.add(to);
    }
  }
  return graph;
}

/** Every set of two or more folders that reach each other (Tarjan's strongly connected components), sorted. */
export function folderCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** The module imports that join the folders of each cycle, as `from → to` lines, for the message. */
export function cycleImports(modules: readonly CruisedModule[], cycles: readonly string[][]): string[] {
  const lines: string[] = [];
  for (const cycle of cycles) {
    const members = new Set(cycle);
    for (const m of modules) {
      if (isTest(m.source) || !members.has(folderOf(m.source))) continue;
      for (const d of m.dependencies) {
        const to = folderOf(d.resolved);
        if (to !== folderOf(m.source) && members.has(to) && !isTest(d.resolved))
          lines.push(`${m.source} → ${d.resolved}`);
      }
    }
  }
  return lines;
}
