import * as fs from "node:fs";
import { groupPorts, parseSlots, placeGroup, type GroupPorts, type Slots } from "../../lib/bridge/slots";
import type { PortRange } from "../../lib/net/port-range";

export interface SlotStoreOptions {
  /** The slots file (programs/bridge/state-dir.ts `slots`): it outlives the bridge, as the stacks do. */
  file: string;
  /** The bridge's whole --port-range, cut into slots. */
  portRange: PortRange;
  /** Ports per slot (a group holds whole slots; lib/bridge/slots.ts). */
  slotSize: number;
  /** The most ports one group may hold; the whole port range when unset. */
  maxPortsPerGroup?: number;
}

/**
 * The local target's port slots, kept in a file: every group's proxy runs on this one machine,
 * so each group holds its own slots of the port range for as long as its stack lives, across
 * bridge restarts. Placement is lib/bridge/slots.ts's (pure); this reads and writes the file.
 */
export class SlotStore {
  constructor(private readonly opts: SlotStoreOptions) {}

  /** Groups that hold a slot (have a stack), e.g. deleted while the bridge was down. */
  groups(): string[] {
    return Object.keys(this.read());
  }

  /**
   * The group's ports, its slots grown to hold `ports` ports; what changed is written before
   * the ports are handed out, so no other group can be given them.
   */
  place(key: string, ports: number): GroupPorts {
    const { portRange, slotSize } = this.opts;
    const slots = this.read();
    const maxSlots = Math.floor((portRange.to - portRange.from + 1) / slotSize);
    const blocks = placeGroup(slots, key, ports, {
      slotSize,
      maxSlots,
      maxSlotsPerGroup: Math.max(
        1,
        Math.floor((this.opts.maxPortsPerGroup ?? maxSlots * slotSize) / slotSize),
      ),
    });
    if (JSON.stringify(slots[key]) !== JSON.stringify(blocks)) this.write({ ...slots, [key]: blocks });
    return groupPorts(portRange, blocks, slotSize);
  }

  /** Frees the slots of a group whose stack is gone. */
  release(key: string): void {
    const slots = this.read();
    if (slots[key] === undefined) return;
    delete slots[key];
    this.write(slots);
  }

  /** The slots file's content; none held when it is missing or unreadable. */
  private read(): Slots {
    try {
      return parseSlots(fs.readFileSync(this.opts.file, "utf8"));
    } catch {
      return {};
    }
  }

  /** Written beside and renamed, so a bridge killed meanwhile leaves the old file whole. */
  private write(slots: Slots): void {
    fs.writeFileSync(`${this.opts.file}.tmp`, JSON.stringify(slots));
    fs.renameSync(`${this.opts.file}.tmp`, this.opts.file);
  }
}
