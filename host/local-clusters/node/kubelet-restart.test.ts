import { strict as assert } from "node:assert";
import {
  KUBELET_RACE_RESTARTS,
  lostDevicePluginSocketRace,
  lostRace,
  restartKubelet,
} from "./kubelet-restart";
import { latestRun } from "../host/run-log";

// The tail of app-1-node's kubelet log from the CI run that failed (stop 41), verbatim.
const LOST_RACE = `
--- 2026-11-27T11:52:38.900Z starting nsenter --net=/run/netns/klutch-app-1 -- kubelet
I1127 11:52:39.339917   19630 state_mem.go:35] "Initializing new in-memory state store"
E1127 11:52:39.379108   19630 manager.go:517] "Failed to read data from checkpoint" err="checkpoint is not found" checkpoint="kubelet_internal_checkpoint"
E1127 11:52:39.394966   19630 server.go:108] "Failed to listen to socket while starting device plugin registry" err="listen unix /var/lib/kubelet/device-plugins/kubelet.sock: bind: address already in use"
E1127 11:52:39.395969   19630 kubelet.go:1688] "Failed to start ContainerManager" err="listen unix /var/lib/kubelet/device-plugins/kubelet.sock: bind: address already in use"
`;

const BAD_FLAG = `
--- 2026-11-27T11:52:38.900Z starting nsenter --net=/run/netns/klutch-app-1 -- kubelet
E1127 11:52:39.000000   19630 run.go:72] "command failed" err="failed to load kubelet config file, path: /x/kubelet.yaml"
`;

// The kubelet's last line in the CI run where a node started again before containerd's CRI
// service had initialized (stop 73, node.test.ts), verbatim.
const CRI_NOT_READY = `
--- 2026-12-05T16:15:29.600Z starting nsenter --net=/run/netns/klutch-node-e2e -- kubelet
E1205 16:15:29.716877    8735 run.go:72] "command failed" err="failed to run Kubelet: validate service connection: validate CRI v1 runtime API for endpoint \\"unix:///tmp/klutch-node-LJVLKp/node-e2e/node/containerd/containerd.sock\\": rpc error: code = Unknown desc = server is not initialized yet"
`;

describe("local node: restarting a kubelet that lost a start-up race", () => {
  it("recognises the lost race from the kubelet's own log lines", () => {
    assert.equal(lostDevicePluginSocketRace(LOST_RACE), true);
  });

  it("does not restart a kubelet that exited for any other reason", () => {
    assert.equal(lostDevicePluginSocketRace(BAD_FLAG), false);
    assert.equal(restartKubelet(BAD_FLAG, 0), false);
  });

  it("restarts at most a bounded number of times", () => {
    assert.equal(restartKubelet(LOST_RACE, 0), true);
    assert.equal(restartKubelet(LOST_RACE, KUBELET_RACE_RESTARTS - 1), true);
    assert.equal(restartKubelet(LOST_RACE, KUBELET_RACE_RESTARTS), false);
  });

  it("judges only the latest run: a race lost before a restart does not excuse the next exit", () => {
    assert.equal(restartKubelet(latestRun(LOST_RACE + BAD_FLAG), 1), false);
    assert.equal(restartKubelet(latestRun(BAD_FLAG + LOST_RACE), 1), true);
  });

  it("restarts a kubelet that found containerd's CRI service not yet initialized, and says which race", () => {
    assert.equal(restartKubelet(CRI_NOT_READY, 0), true);
    assert.equal(restartKubelet(CRI_NOT_READY, KUBELET_RACE_RESTARTS), false);
    assert.equal(lostRace(CRI_NOT_READY), "containerd's CRI service was not initialized yet");
    assert.match(lostRace(LOST_RACE)!, /held \/var\/lib\/kubelet\/device-plugins\/kubelet\.sock/);
    assert.equal(lostRace(BAD_FLAG), undefined);
  });
});
