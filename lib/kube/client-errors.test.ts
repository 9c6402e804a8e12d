import { strict as assert } from "node:assert";
import * as net from "node:net";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { clientErrorMessage } from "./client-errors";

/** A loopback port nothing listens on: one the kernel handed out, closed again. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("a failed Kubernetes client call in words", () => {
  it("says why a request got no answer, as client-node 2.x keeps it in the error's cause", async () => {
    const port = await closedPort();
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    const err = await kc
      .makeApiClient(CoreV1Api)
      .readNamespace({ name: "default" })
      .then(
        () => assert.fail("answered"),
        (e: unknown) => e,
      );
    // The client's own words are undici's, without the reason (1.x said it in the message).
    assert.equal((err as Error).message, "fetch failed");
    assert.equal(clientErrorMessage(err), `fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it("gives a cause without a message by its code, and leaves other errors as they are", () => {
    const tried = Object.assign(new AggregateError([], ""), { code: "ECONNREFUSED" });
    assert.equal(
      clientErrorMessage(new TypeError("fetch failed", { cause: tried })),
      "fetch failed: ECONNREFUSED",
    );
    const answered = Object.assign(new Error("HTTP-Code: 404"), { code: 404, body: "{}" });
    assert.equal(clientErrorMessage(answered), "HTTP-Code: 404");
    assert.equal(clientErrorMessage("refused"), "refused");
  });
});
