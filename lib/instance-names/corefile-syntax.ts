/**
 * Enough of the Corefile's syntax to judge a stub zone before Klutch adds it to someone else's
 * Corefile: which server blocks exist, the keys (zones) each declares, and each block's
 * directives. CoreDNS reads the Corefile as Caddy does: whitespace-separated tokens, `"` quotes
 * a token, `#` at the start of a token comments out the rest of the line, and a brace is
 * syntax only as a token of its own (`{$ENV}` is a key, not a block). A server block is the keys
 * on one line, then `{` on that line, up to its matching `}`; keys may be separated by commas.
 *
 * Imports only its pure siblings, as corefile-values.ts says why.
 */

import { normalZone } from "./corefile-values";

export interface Token {
  text: string;
  /** 1-based line the token starts on. */
  line: number;
  quoted: boolean;
}

export interface Directive {
  name: string;
  /** The tokens after the name on its line, up to a `{` opening its options. */
  args: string[];
  line: number;
}

export interface ServerBlock {
  keys: string[];
  line: number;
  directives: Directive[];
}

export interface CorefileOutline {
  blocks: ServerBlock[];
  /** Lines of tokens outside any block: `import` lines, or a single block written without braces. */
  loose: Token[][];
  /** Why the braces do not add up, when they do not (CoreDNS would refuse the file). */
  problem?: string;
}

/** The Corefile's tokens, comments left out. */
export function corefileTokens(text: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let i = 0;
  const space = (c: string | undefined) => c === " " || c === "\t" || c === "\r" || c === "\n";
  while (i < text.length) {
    const c = text[i]!;
    if (space(c)) {
      if (c === "\n") line++;
      i++;
    } else if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === '"') {
      const start = line;
      let value = "";
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === "\\" && text[i + 1] === '"') i++;
        else if (text[i] === "\n") line++;
        value += text[i];
      }
      i++;
      tokens.push({ text: value, line: start, quoted: true });
    } else {
      let value = "";
      for (; i < text.length && !space(text[i]); i++) value += text[i];
      tokens.push({ text: value, line, quoted: false });
    }
  }
  return tokens;
}

const is = (t: Token | undefined, brace: "{" | "}") => t !== undefined && !t.quoted && t.text === brace;

/** The Corefile's server blocks (snippets `(name) { … }` left out), in order. */
export function corefileOutline(text: string): CorefileOutline {
  const lines = new Map<number, Token[]>();
  for (const t of corefileTokens(text)) lines.set(t.line, [...(lines.get(t.line) ?? []), t]);
  const outline: CorefileOutline = { blocks: [], loose: [] };
  let depth = 0;
  let block: ServerBlock | undefined;
  for (const [line, tokens] of lines) {
    let k = 0;
    if (depth === 0) {
      const open = tokens.findIndex((t) => is(t, "{"));
      if (open < 0) {
        if (tokens.some((t) => is(t, "}")))
          return { ...outline, problem: `a } at line ${line} closes nothing` };
        outline.loose.push(tokens);
        continue;
      }
      if (open === 0) return { ...outline, problem: `the { at line ${line} opens a block without a name` };
      const keys = tokens.slice(0, open).flatMap((t) => t.text.split(",").filter((key) => key !== ""));
      block = { keys, line, directives: [] };
      depth = 1;
      k = open + 1;
    }
    const first = tokens[k];
    if (depth === 1 && first && !is(first, "{") && !is(first, "}")) {
      const end = tokens.findIndex((t, j) => j > k && (is(t, "{") || is(t, "}")));
      const args = tokens.slice(k + 1, end < 0 ? undefined : end).map((t) => t.text);
      block!.directives.push({ name: first.text, args, line });
    }
    for (; k < tokens.length; k++) {
      if (is(tokens[k], "{")) depth++;
      if (!is(tokens[k], "}")) continue;
      depth--;
      if (depth > 0) continue;
      if (!block!.keys[0]?.startsWith("(")) outline.blocks.push(block!);
      if (k < tokens.length - 1)
        return { ...outline, problem: `text follows the } closing a block at line ${line}` };
    }
  }
  if (depth > 0) return { ...outline, problem: `the block opened at line ${block!.line} is never closed` };
  return outline;
}

/** A server block key as CoreDNS tells keys apart: transport, zone (normalised) and port. */
export function serverKey(key: string): { transport: string; zone: string; port: string } {
  const scheme = /^([a-z0-9+.-]+):\/\//i.exec(key);
  const transport = scheme ? scheme[1]!.toLowerCase() : "dns";
  let rest = scheme ? key.slice(scheme[0].length) : key;
  const port = /:([^:\]]*)$/.exec(rest);
  if (port) rest = rest.slice(0, port.index);
  return { transport, zone: normalZone(rest), port: port ? port[1]! : "" };
}
