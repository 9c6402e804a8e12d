import { strict as assert } from "node:assert";
import { A9S_BINDING_RESOURCE, composeA9sServiceBinding } from "./a9s-binding.js";
import { bindingComposite, bytes, json } from "./test-helpers.js";

const composite = (spec: Record<string, unknown> = {}) =>
  bindingComposite("orders-mq-x7k2p", "orders-mq", "uid-1", {
    instanceRef: "orders-rabbit",
    serviceInstanceType: "messaging",
    compositionRef: { name: "a9s-servicebinding-network" },
    ...spec,
  });

const observedBinding = (
  ready: boolean,
  atProvider: Record<string, unknown>,
  creds: Record<string, string> = {},
) => ({
  [A9S_BINDING_RESOURCE]: {
    resource: {
      apiVersion: "dataservices.anynines.com/v1",
      kind: "ServiceBinding",
      status: {
        atProvider,
        conditions: [
          { type: "Ready", status: ready ? "True" : "False", reason: ready ? "Available" : "Creating" },
        ],
      },
    },
    connectionDetails: bytes(creds),
  },
});

describe("composition function: a9s ServiceBinding", () => {
  it("composes provider-anynines' ServiceBinding field for field as upstream's a9s-servicebinding patches it", () => {
    // crossplane-api/api/a9s/servicebinding/composition.yaml (anynines/klutchio 0b4539e).
    const out = composeA9sServiceBinding(composite(), {});
    assert.deepEqual(out.composed, [
      {
        name: "a9s-servicebinding",
        ready: false,
        resource: {
          apiVersion: "dataservices.anynines.com/v1",
          kind: "ServiceBinding",
          metadata: {
            labels: {
              "klutch.io/instance-type": "messaging",
              "crossplane.io/claim-namespace": "team-a",
              "crossplane.io/claim-name": "orders-mq",
            },
          },
          spec: {
            forProvider: { acceptsIncomplete: true, instanceName: "orders-rabbit" },
            providerConfigRef: { name: "messaging-service-broker" },
            writeConnectionSecretToRef: { namespace: "team-a", name: "orders-mq-creds" },
          },
        },
      },
    ]);
    assert.equal(out.conditions[0]!.reason, "WaitingForProvider");
    assert.equal(
      out.connectionDetails,
      undefined,
      "publishes nothing: the instance's own hosts never reach the claim",
    );
  });

  it("copies serviceBindingID, state and conditions to status.managed, and says why it is not bound yet", () => {
    const out = composeA9sServiceBinding(
      composite(),
      observedBinding(false, { serviceBindingID: 4711, state: "in progress" }),
    );
    const managed = json(out.compositePatch).status.managed;
    assert.equal(managed.serviceBindingID, 4711);
    assert.equal(managed.state, "in progress");
    assert.equal(managed.conditions[0].reason, "Creating");
    assert.match(out.conditions[0]!.message!, /is not Ready yet \(Creating\)/);
  });

  it("is implemented once Ready with credentials read back from its Secret", () => {
    const reading = composeA9sServiceBinding(composite(), observedBinding(true, { state: "succeeded" }));
    assert.equal(reading.conditions[0]!.reason, "ReadingCredentials");
    const out = composeA9sServiceBinding(
      composite(),
      observedBinding(true, { state: "succeeded" }, { username: "u" }),
    );
    assert.deepEqual([out.conditions[0]!.status, out.conditions[0]!.reason], ["True", "Implemented"]);
    assert.equal(out.composed[0]!.ready, true);
  });

  it("refuses a service type anynines does not bind, naming the ones it does", () => {
    const out = composeA9sServiceBinding(composite({ serviceInstanceType: "objectstore" }), {});
    assert.deepEqual(out.composed, []);
    assert.equal(out.conditions[0]!.reason, "UnsupportedServiceType");
    assert.match(
      out.conditions[0]!.message!,
      /"objectstore"; anynines binds postgresql, mariadb, mongodb, keyvalue, search, logme2, prometheus, messaging/,
    );
  });
});
