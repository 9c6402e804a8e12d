import { strict as assert } from "node:assert";
import * as k8s from "@kubernetes/client-node";
import { claimSource, parseResource, type WatchLike } from "./kube-source";

/** A KubeConfig that names a cluster; nothing here talks to it. */
function kubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "app", server: "https://127.0.0.1:6443", skipTLSVerify: false }],
    users: [{ name: "names", token: "t" }],
    contexts: [{ name: "app", cluster: "app", user: "names" }],
    currentContext: "app",
  });
  return kc;
}

/** A Watch whose events and end the test sends. */
class FakeWatch implements WatchLike {
  calls: { path: string; query: Record<string, unknown> }[] = [];
  send: (phase: string, obj: unknown) => void = () => undefined;
  end: (err: unknown) => void = () => undefined;
  aborted = 0;
  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    send: (phase: string, obj: unknown) => void,
    end: (err: unknown) => void,
  ): Promise<AbortController> {
    this.calls.push({ path, query });
    [this.send, this.end] = [send, end];
    const controller = new AbortController();
    controller.signal.addEventListener("abort", () => this.aborted++);
    return Promise.resolve(controller);
  }
}

describe("instance names: the claims from the API server", () => {
  it("takes GROUP/VERSION/PLURAL and refuses anything else, naming the flag and an example", () => {
    assert.deepEqual(parseResource("anynines.com/v1/servicebindings"), {
      group: "anynines.com",
      version: "v1",
      plural: "servicebindings",
    });
    for (const bad of ["servicebindings", "anynines.com/servicebindings", "Anynines.com/v1/x", "a/v1/b/c"])
      assert.throws(
        () => parseResource(bad),
        /--resource ".*" must be GROUP\/VERSION\/PLURAL .* anynines.com\/v1/,
      );
  });

  it("watches the resource cluster-wide from a version, with bookmarks, and maps the watch's phases", async () => {
    const fake = new FakeWatch();
    const source = claimSource(kubeConfig(), "anynines.com/v1/servicebindings", fake);
    const events: string[] = [];
    const ends: unknown[] = [];
    const handle = await source.watch(
      "42",
      (type, c) => events.push(`${type} ${c.metadata.name ?? ""}`),
      (err) => ends.push(err),
    );
    assert.deepEqual(fake.calls, [
      {
        path: "/apis/anynines.com/v1/servicebindings",
        query: { resourceVersion: "42", allowWatchBookmarks: true },
      },
    ]);
    fake.send("ADDED", { metadata: { name: "a" } });
    fake.send("MODIFIED", { metadata: { name: "a" } });
    fake.send("DELETED", { metadata: { name: "a" } });
    fake.send("BOOKMARK", { metadata: { resourceVersion: "50" } });
    fake.send("UNKNOWN", {});
    assert.deepEqual(events, ["add a", "update a", "delete a", "bookmark "]);
    fake.send("ERROR", { kind: "Status", code: 410, message: "too old resource version: 42 (50)" });
    assert.equal((ends[0] as { code: number }).code, 410);
    assert.equal(fake.aborted, 1);
    fake.end(null);
    fake.end(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
    assert.deepEqual(ends.slice(1), [undefined, undefined], "ordinary ends: watched again from the version");
    const reset = new Error("socket hang up");
    fake.end(reset);
    assert.equal(ends[3], reset);
    handle.stop();
    const next = await source.watch(
      "50",
      () => undefined,
      () => undefined,
    );
    next.stop();
    assert.equal(fake.aborted, 2, "stop() ends the watch");
  });
});
