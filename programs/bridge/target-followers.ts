import type { NetworkPathObject } from "../../lib/bridge/api";
import { groupImplementation } from "../../lib/bridge/grouping";
import type { KubernetesTarget, TargetFollower } from "../../network/contract/implementation";
import { IMPLEMENTATIONS } from "../../network/registry";

/**
 * What each implementation's groups follow besides their paths (its spec's `pulumi.follower`,
 * network/contract/implementation.ts TargetFollower): read before each run of one of its groups,
 * polled for moves (programs/bridge/controller.ts). Only on the kubernetes target, whose
 * data-service cluster there is to read; the bridge knows no implementation's follower itself.
 */
export class TargetFollowers {
  private readonly byImplementation = new Map<string, TargetFollower>();

  constructor(opts?: { kubeconfig: string; targetOf: (key: string) => KubernetesTarget | undefined }) {
    if (!opts) return;
    for (const spec of IMPLEMENTATIONS) {
      const make = spec.pulumi.follower?.();
      if (make) this.byImplementation.set(spec.name, make(opts));
    }
  }

  /** The followers, each with its implementation's name (one poll each). */
  all(): { implementation: string; follower: TargetFollower }[] {
    return [...this.byImplementation].map(([implementation, follower]) => ({ implementation, follower }));
  }

  /** The follower of a group's implementation, when it follows that group. */
  of(key: string): TargetFollower | undefined {
    const follower = this.byImplementation.get(groupImplementation(key));
    return follower?.follows(key) ? follower : undefined;
  }

  /** The target a group runs with: what its implementation follows, read now. */
  realise<T extends KubernetesTarget>(
    key: string,
    target: T,
    live: readonly NetworkPathObject[],
  ): Promise<T> {
    return (
      this.byImplementation.get(groupImplementation(key))?.realise(key, target, live) ??
      Promise.resolve(target)
    );
  }

  /** Forgets a group whose stack is gone. */
  forget(key: string): void {
    this.byImplementation.get(groupImplementation(key))?.forget(key);
  }
}
