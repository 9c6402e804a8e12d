import * as k8s from "@kubernetes/client-node";
import type { ServerCheckAnswers, ServerCheckInput } from "../contract/implementation";
import { SETTINGS_NAMESPACE } from "../../lib/bridge/settings";
import type { ConfigIssue } from "../../lib/config/messages";
import { clientErrorMessage } from "../../lib/kube/client-errors";
import { kubeConfigFrom } from "../../lib/kube/kubeconfig";
import { type NodePortProbe, nodePortProbes, probeIssue, probeService } from "./model/node-port-probe";
import { type AdmissionProbe, admissionIssue, admissionProbes } from "./model/service-admission";

/**
 * The proxy's server check (its spec's `pulumi.serverCheck`): the NodePort proxies' ranges, and
 * whether the cluster's admission takes each proxy's Service as the environment would make it.
 * A preview asks admission only: the range question is a real create (model/node-port-probe.ts
 * says why), which a preview must not make, so the range is asked on `up`.
 */
export async function proxyServerCheck(input: ServerCheckInput): Promise<ServerCheckAnswers> {
  const ranges = input.preview ? [] : nodePortProbes(input.config);
  const shapes = admissionProbes(input.config);
  const answers = await Promise.all([
    ranges.length > 0 ? askNodePorts(input.kubeconfig, input.context, ranges) : none(),
    shapes.length > 0 ? askAdmission(input.kubeconfig, input.context, shapes) : none(),
  ]);
  return { issues: answers.flatMap((a) => a.issues), notes: answers.flatMap((a) => a.notes) };
}

const none = (): Promise<ServerCheckAnswers> => Promise.resolve({ issues: [], notes: [] });

function coreClient(kubeconfig: string, context: string | undefined): k8s.CoreV1Api {
  return kubeConfigFrom(kubeconfig, context).makeApiClient(k8s.CoreV1Api);
}

/**
 * The message of a client-node ApiException (its body is the API server's Status), or the error's
 * own, with why when the server gave no answer (lib/kube/client-errors.ts).
 */
function refusalOf(e: unknown): string {
  const body = (e as { body?: unknown }).body;
  if (typeof body === "string") {
    try {
      const status = JSON.parse(body) as { message?: string };
      if (status.message) return status.message;
    } catch {
      return body;
    }
  }
  return clientErrorMessage(e);
}

/**
 * Asks the data-service cluster's API server (model/node-port-probe.ts says why a real create,
 * and what an answer means): per probe, a Service with the range's ends as node ports in
 * `namespace`, deleted as soon as it exists. A refusal other than the range (already allocated,
 * forbidden, unreachable) refuses nothing: the run that follows meets it where it belongs.
 */
export async function askNodePorts(
  kubeconfig: string,
  context: string | undefined,
  probes: readonly NodePortProbe[],
  namespace = "default",
): Promise<ServerCheckAnswers> {
  const core = coreClient(kubeconfig, context);
  return askEach(
    probes,
    async (probe) => {
      const made = await core.createNamespacedService({ namespace, body: probeService(probe) });
      await core.deleteNamespacedService({ namespace, name: made.metadata!.name! });
    },
    probeIssue,
    (probe, refusal) =>
      `could not ask ${probe.cluster}'s API server about node ports ${probe.range.from}-${probe.range.to}: ${refusal}`,
  );
}

/**
 * Asks the data-service cluster's admission (model/service-admission.ts says why a dry-run is
 * enough here): per probe, a server-side dry-run of the proxy's Service in the proxies'
 * namespace, or in `default` while that namespace is not made yet. Nothing is persisted. A
 * refusal that is not admission's (forbidden to the deployer, unreachable) refuses nothing.
 */
export async function askAdmission(
  kubeconfig: string,
  context: string | undefined,
  probes: readonly AdmissionProbe[],
  namespace = SETTINGS_NAMESPACE,
): Promise<ServerCheckAnswers> {
  const core = coreClient(kubeconfig, context);
  const dryRun = (ns: string, probe: AdmissionProbe) =>
    core.createNamespacedService({ namespace: ns, body: probe.service, dryRun: "All" });
  return askEach(
    probes,
    (probe) =>
      dryRun(namespace, probe).catch((e: unknown) => {
        if (!/namespaces? "[^"]+" not found/.test(refusalOf(e))) throw e;
        return dryRun("default", probe);
      }),
    admissionIssue,
    (probe, refusal) =>
      `could not ask ${probe.cluster}'s admission about a ${probe.serviceType} proxy Service: ${refusal}`,
  );
}

/**
 * Asks each probe in turn: a refusal is the issue `judge` makes of it, or, when it is no verdict
 * on the setting, a note of what could not be asked.
 */
async function askEach<P>(
  probes: readonly P[],
  ask: (probe: P) => Promise<unknown>,
  judge: (probe: P, refusal: string) => ConfigIssue | undefined,
  unasked: (probe: P, refusal: string) => string,
): Promise<ServerCheckAnswers> {
  const answers: ServerCheckAnswers = { issues: [], notes: [] };
  for (const probe of probes) {
    try {
      await ask(probe);
    } catch (e) {
      const refusal = refusalOf(e);
      const issue = judge(probe, refusal);
      if (issue) answers.issues.push(issue);
      else answers.notes.push(unasked(probe, refusal));
    }
  }
  return answers;
}
