import { strict as assert } from "node:assert";
import { endpointList, throughPaths } from "../../test-helpers.js";
import { postgresql } from "./credentials.js";

// The broker's credentials as provider-anynines flattens them (servicebinding_test.go,
// anynines/klutchio 0b4539e: "host", "hosts" as fmt prints []string, "port" 5432, "uri").
const SECRET = {
  host: "hmm133825-psql-master-alias.node.dc1.dsf2.a9ssvc",
  hosts: "[hmm133825-pg-0.node.dc1.dsf2.a9ssvc]",
  name: "hmm133825",
  password: "a9s28d0270ac3dasda8a66easdccc315e00",
  port: "5432",
  uri: "postgres://a9se0e1dasd30f0510b5asd87ba44c45:a9s28d0270ac3dasda8a66easdccc315e00@hmm133825-psql-master-alias.node.dc1.dsf2.a9ssvc:5432/hmm133825",
  username: "a9se0e1dasd30f0510b5asd87ba44c45",
};
const PATHS = {
  "hmm133825-psql-master-alias.node.dc1.dsf2.a9ssvc:5432": "np.app:30001",
  "hmm133825-pg-0.node.dc1.dsf2.a9ssvc:5432": "np.app:30002",
};

describe("data service postgresql: credentials", () => {
  it("names the primary's alias and each node: one endpoint each", () => {
    assert.deepEqual(endpointList(throughPaths(postgresql, SECRET, PATHS).endpoints), [
      "SQL hmm133825-psql-master-alias.node.dc1.dsf2.a9ssvc:5432",
      "SQL hmm133825-pg-0.node.dc1.dsf2.a9ssvc:5432",
    ]);
  });

  it("rewrites host, port, uri and hosts; a node whose path has another port keeps it in its entry", () => {
    const { rewritten } = throughPaths(postgresql, SECRET, PATHS);
    assert.deepEqual(rewritten, {
      ...SECRET,
      host: "np.app",
      port: "30001",
      hosts: "[np.app:30002]",
      uri: "postgres://a9se0e1dasd30f0510b5asd87ba44c45:a9s28d0270ac3dasda8a66easdccc315e00@np.app:30001/hmm133825",
    });
  });

  it("a single node named in host and hosts is one endpoint, and hosts stays a bare list", () => {
    const alias = SECRET.host;
    const { endpoints, rewritten } = throughPaths(
      postgresql,
      { ...SECRET, hosts: `[${alias}]` },
      { [`${alias}:5432`]: "np.app:30001" },
    );
    assert.equal(endpointList(endpoints).length, 1);
    assert.equal(rewritten.hosts, "[np.app]");
  });

  it("waits for host, and refuses a port that is not one", () => {
    const noHost: Record<string, string> = { ...SECRET };
    delete noHost.host;
    assert.deepEqual(throughPaths(postgresql, noHost, PATHS).endpoints, {
      kind: "waiting",
      message: 'the credentials have no "host" yet',
    });
    const bad = throughPaths(postgresql, { ...SECRET, port: "fivefour" }, PATHS).endpoints;
    assert.equal(bad.kind, "invalid");
    assert.match((bad as { message: string }).message, /"port" is "fivefour", not a port/);
  });
});
