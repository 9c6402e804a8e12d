import type { Clock } from "../../programs/bridge/workqueue";

const settle = () => new Promise((r) => setImmediate(r));

/** A clock whose timers fire when the test advances it. */
export class FakeClock implements Clock {
  private t = 0;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private next = 0;
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.push({ at: this.t + ms, fn, id });
    return id;
  }
  clearTimeout(id: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== id);
  }
  pending(): number[] {
    return this.timers.map((x) => x.at - this.t).sort((a, b) => a - b);
  }
  async advance(ms: number): Promise<void> {
    this.t += ms;
    const due = this.timers.filter((x) => x.at <= this.t);
    this.timers = this.timers.filter((x) => x.at > this.t);
    for (const x of due) x.fn();
    await settle();
  }
}
