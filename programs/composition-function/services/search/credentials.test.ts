import { strict as assert } from "node:assert";
import { endpointList, throughPaths } from "../../test-helpers.js";
import { search } from "./credentials.js";

// provider-anynines' Search fixture (servicebinding_test.go, anynines/klutchio 0b4539e): "host"
// a []string of URLs, printed by fmt as a bracketed list.
const SECRET = {
  cacrt: "-----BEGIN CERTIFICATE-----\nMIIDHTCC\n-----END CERTIFICATE-----",
  host: "[https://mdod72216c.service.dc1.dsf2.a9ssvc:9200]",
  hosts: "[mdod72216c-os-0.node.dc1.dsf2.a9ssvc]",
  password: "a9sd21f426c693f8d751cef80c76c2c23980c438cca",
  port: "9200",
  scheme: "https",
  username: "a9sc56b7fde44da65146f3b14f862bc11be6311801f",
};

describe("data service search: credentials", () => {
  it("reads host as a list of URLs and hosts with port", () => {
    const { endpoints, rewritten } = throughPaths(search, SECRET, {
      "mdod72216c.service.dc1.dsf2.a9ssvc:9200": "np.app:30041",
      "mdod72216c-os-0.node.dc1.dsf2.a9ssvc:9200": "np.app:30042",
    });
    assert.deepEqual(endpointList(endpoints), [
      "Search mdod72216c.service.dc1.dsf2.a9ssvc:9200",
      "Search mdod72216c-os-0.node.dc1.dsf2.a9ssvc:9200",
    ]);
    assert.deepEqual(rewritten, {
      ...SECRET,
      host: "[https://np.app:30041]",
      hosts: "[np.app]",
      port: "30042",
    });
  });

  it("refuses a host list entry that is no URL", () => {
    const bad = throughPaths(search, { ...SECRET, host: "[mdod72216c:9200]" }, {}).endpoints;
    assert.deepEqual(bad, {
      kind: "invalid",
      message: 'the credentials\' "host" is not a URL of the form scheme://host:port',
    });
  });
});
