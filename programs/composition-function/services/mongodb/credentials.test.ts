import { strict as assert } from "node:assert";
import { endpointList, throughPaths } from "../../test-helpers.js";
import { mongodb } from "./credentials.js";

// upstream's MongoDB keys (test/e2e/mongodb/manifests/servicebinding-secret.yaml) with a
// three-member replica set as the broker lists it (servicebinding_test.go's shape: host:port
// entries of a Go-printed list, the URI's authority listing the members).
const MEMBERS = [0, 1, 2].map((i) => `mdod661341-mongodb-${i}.node.dc1.dsf2.a9ssvc`);
const SECRET = {
  default_database: "mdod661341",
  hosts: `[${MEMBERS.map((m) => `${m}:27017`).join(" ")}]`,
  password: "a9s253a1dc",
  uri: `mongodb://a9s-brk-usr-ce25:a9s253a1dc@${MEMBERS.map((m) => `${m}:27017`).join(",")}/mdod661341?ssl=true`,
  username: "a9s-brk-usr-ce25",
};
const PATHS = Object.fromEntries(MEMBERS.map((m, i) => [`${m}:27017`, `np.app:3002${i}`]));

describe("data service mongodb: credentials", () => {
  it("names every member of the replica set: three endpoints", () => {
    assert.deepEqual(
      endpointList(throughPaths(mongodb, SECRET, PATHS).endpoints),
      MEMBERS.map((m) => `MongoDB ${m}:27017`),
    );
  });

  it("rewrites hosts and every host of the URI's authority, keeping its database and options", () => {
    const { rewritten } = throughPaths(mongodb, SECRET, PATHS);
    assert.deepEqual(rewritten, {
      ...SECRET,
      hosts: "[np.app:30020 np.app:30021 np.app:30022]",
      uri: "mongodb://a9s-brk-usr-ce25:a9s253a1dc@np.app:30020,np.app:30021,np.app:30022/mdod661341?ssl=true",
    });
  });

  it("a URI naming a host the list does not is an endpoint of its own", () => {
    const uri = "mongodb://u:p@zzd661341-mongodb-0.node.dc1.dsf2.a9ssvc:27017/mdod661341";
    const one = { ...SECRET, hosts: `[${MEMBERS[0]}:27017]`, uri };
    assert.deepEqual(
      endpointList(
        throughPaths(mongodb, one, { ...PATHS, "zzd661341-mongodb-0.node.dc1.dsf2.a9ssvc:27017": "np.app:1" })
          .endpoints,
      ),
      [`MongoDB ${MEMBERS[0]}:27017`, "MongoDB zzd661341-mongodb-0.node.dc1.dsf2.a9ssvc:27017"],
    );
  });

  it("waits for hosts", () => {
    assert.equal(throughPaths(mongodb, { uri: SECRET.uri }, PATHS).endpoints.kind, "waiting");
  });
});
