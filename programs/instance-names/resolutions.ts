/**
 * The DNS answers of the instance names' addresses that are host names (an AWS load balancer's
 * name: its IPv4 addresses change over time, so they are asked again every refresh). A failed
 * answer keeps the last good one: a load balancer's name that stops resolving for a moment should
 * not take the instance's name away from the app cluster's pods.
 */
import { isIPv4 } from "../../lib/instance-names/records";
import { clientErrorMessage } from "../../lib/kube/client-errors";

interface Answer {
  ipv4: string[];
  /** Why the last question failed (a DNS error code), while it does. */
  error?: string;
}

export class Resolutions {
  private readonly answers = new Map<string, Answer>();

  constructor(
    private readonly resolve: (host: string) => Promise<string[]>,
    /** Called when a refresh found an answer (or its failure) different from before. */
    private readonly changed: () => void,
  ) {}

  /** Resolves the hosts not asked yet, and forgets the ones no longer named. */
  async use(hosts: string[]): Promise<void> {
    const wanted = new Set(hosts);
    for (const host of this.answers.keys()) if (!wanted.has(host)) this.answers.delete(host);
    await Promise.all([...wanted].filter((h) => !this.answers.has(h)).map((h) => this.ask(h, true)));
  }

  /** Asks again for every host in use. */
  async refresh(): Promise<void> {
    const before = JSON.stringify([...this.answers]);
    await Promise.all([...this.answers.keys()].map((h) => this.ask(h, false)));
    if (JSON.stringify([...this.answers]) !== before) this.changed();
  }

  /** A host's addresses, and what is wrong with them if something is (one line, for the log). */
  answer(host: string): { ipv4: string[]; problem?: string } {
    const a = this.answers.get(host) ?? { ipv4: [], error: "not asked yet" };
    if (a.error === undefined) return { ipv4: a.ipv4 };
    const address = `address ${JSON.stringify(host)} does not resolve (${a.error})`;
    return {
      ipv4: a.ipv4,
      problem: a.ipv4.length
        ? `${address}; its last answer (${a.ipv4.join(", ")}) is kept`
        : `${address}; the name is left out until it does`,
    };
  }

  private async ask(host: string, first: boolean): Promise<void> {
    let answer: Answer;
    try {
      const ipv4 = [...new Set((await this.resolve(host)).filter(isIPv4))].sort();
      answer = ipv4.length ? { ipv4 } : { ipv4: [], error: "no IPv4 address" };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      answer = { ipv4: [], error: typeof code === "string" ? code : clientErrorMessage(err) };
    }
    const last = this.answers.get(host);
    // A host forgotten while the question was out (no claim names it now) stays forgotten.
    if (!last && !first) return;
    this.answers.set(host, answer.error !== undefined && last ? { ...answer, ipv4: last.ipv4 } : answer);
  }
}
