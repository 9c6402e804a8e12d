import { strict as assert } from "node:assert";
import { formatList, formatUrl, parseList, parseUrl, splitHostPort } from "./addresses.js";

describe("data service credentials: addresses", () => {
  it("reads a list as Go's fmt prints a slice, as JSON, or as one bare value", () => {
    // fmt.Sprint([]string{"a", "b"}) and fmt.Sprintf("%+v", []string{"h"}) (flattenmap.go).
    assert.deepEqual(parseList("[a b]"), { entries: ["a", "b"], style: "go" });
    assert.deepEqual(parseList("[h0:27017]"), { entries: ["h0:27017"], style: "go" });
    assert.deepEqual(parseList(' ["h"]'), { entries: ["h"], style: "json" });
    assert.deepEqual(parseList("[]"), { entries: [], style: "go" });
    assert.deepEqual(parseList("h.internal"), { entries: ["h.internal"], style: "single" });
    assert.equal(formatList(["x", "y"], "go"), "[x y]");
    assert.equal(formatList(["x"], "json"), '["x"]');
    assert.equal(formatList(["x"], "single"), "x");
  });

  it("splits host and port, IPv6 in brackets, and refuses what names no host", () => {
    assert.deepEqual(splitHostPort("h:5432"), { host: "h", port: "5432" });
    assert.deepEqual(splitHostPort("h"), { host: "h" });
    assert.deepEqual(splitHostPort("[fd00::1]:5432"), { host: "fd00::1", port: "5432" });
    assert.deepEqual(splitHostPort("fd00::1"), { host: "fd00::1" });
    assert.equal(splitHostPort("https://h:1"), undefined);
    assert.equal(splitHostPort(""), undefined);
  });

  it("splits a URL's authority into its hosts, keeping userinfo and everything after", () => {
    const url = parseUrl("mongodb://u:p%40ss@h0:27017,h1/db?ssl=true#x")!;
    assert.deepEqual(url, {
      scheme: "mongodb",
      userinfo: "u:p%40ss@",
      hosts: [{ host: "h0", port: "27017" }, { host: "h1" }],
      tail: "/db?ssl=true#x",
    });
    assert.equal(
      formatUrl(url, [
        { host: "np.app", port: 1 },
        { host: "fd00::7", port: 2 },
      ]),
      "mongodb://u:p%40ss@np.app:1,[fd00::7]:2/db?ssl=true#x",
    );
    assert.equal(parseUrl("host=pg port=5432"), undefined);
    assert.equal(parseUrl("EXAMPLE-URI"), undefined);
  });
});
