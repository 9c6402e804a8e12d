import { strict as assert } from "node:assert";
import { endpointList, throughPaths } from "../../test-helpers.js";
import { keyvalue } from "./credentials.js";

// provider-anynines' KeyValue fixture (servicebinding_test.go, anynines/klutchio 0b4539e).
const SECRET = {
  cacrt: "-----BEGIN CERTIFICATE-----\nMIID\n-----END CERTIFICATE-----\n",
  host: "hostname",
  hosts: "[hostname]",
  load_balanced_host: "lbhostname",
  "valkey.password": "pw",
  "valkey.port": "6379",
  "valkey.username": "a9s-user",
};

describe("data service keyvalue: credentials", () => {
  it("reads the port nested as valkey.port; the load-balanced host is an endpoint of its own", () => {
    const { endpoints, rewritten } = throughPaths(keyvalue, SECRET, {
      "hostname:6379": "np.app:30031",
      "lbhostname:6379": "np.app:30032",
    });
    assert.deepEqual(endpointList(endpoints), ["KeyValue hostname:6379", "KeyValue lbhostname:6379"]);
    assert.deepEqual(rewritten, {
      ...SECRET,
      host: "np.app",
      hosts: "[np.app]",
      "valkey.port": "30031",
      // valkey.port is the host's path's; the load-balanced host's path has its own port.
      load_balanced_host: "np.app:30032",
    });
  });

  it("waits for valkey.port's host, and refuses a port that is not one", () => {
    assert.equal(throughPaths(keyvalue, { "valkey.port": "6379" }, {}).endpoints.kind, "waiting");
    assert.equal(throughPaths(keyvalue, { ...SECRET, "valkey.port": "0" }, {}).endpoints.kind, "invalid");
  });
});
