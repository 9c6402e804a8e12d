import * as k8s from "@kubernetes/client-node";
import type { ServerCheckAnswers, ServerCheckInput } from "../contract/implementation";
import { type NodePortProbe, nodePortProbes, probeIssue, probeService } from "./model/node-port-probe";

/** The proxy's server check (its spec's `pulumi.serverCheck`): the NodePort proxies' ranges. */
export function proxyServerCheck(input: ServerCheckInput): Promise<ServerCheckAnswers> {
  const probes = nodePortProbes(input.config);
  if (probes.length === 0) return Promise.resolve({ issues: [], notes: [] });
  return askNodePorts(input.kubeconfig, input.context, probes);
}

/** The message of a client-node ApiException (its body is the API server's Status), or the error's own. */
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
  return e instanceof Error ? e.message : String(e);
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
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfig);
  if (context) kc.setCurrentContext(context);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const answers: ServerCheckAnswers = { issues: [], notes: [] };
  for (const probe of probes) {
    try {
      const made = await core.createNamespacedService({
        namespace,
        body: probeService(probe),
      });
      await core.deleteNamespacedService({ namespace, name: made.metadata!.name! });
    } catch (e) {
      const refusal = refusalOf(e);
      const issue = probeIssue(probe, refusal);
      if (issue) answers.issues.push(issue);
      else
        answers.notes.push(
          `could not ask ${probe.cluster}'s API server about node ports ${probe.range.from}-${probe.range.to}: ${refusal}`,
        );
    }
  }
  return answers;
}
