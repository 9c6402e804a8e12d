/**
 * How many availability zones each AWS region offers a new account. Validation uses it so a
 * stack that asks for more zones than its region has fails before anything is registered;
 * the cluster component also asks AWS (getAvailabilityZones) at run time, so a region that
 * is missing here, or an account that sees fewer zones, still gets a clear error.
 */
export const REGION_AVAILABILITY_ZONES: Readonly<Record<string, number>> = {
  "us-east-1": 6,
  "us-east-2": 3,
  "us-west-1": 2,
  "us-west-2": 4,
  "ca-central-1": 3,
  "ca-west-1": 3,
  "sa-east-1": 3,
  "eu-central-1": 3,
  "eu-central-2": 3,
  "eu-west-1": 3,
  "eu-west-2": 3,
  "eu-west-3": 3,
  "eu-north-1": 3,
  "eu-south-1": 3,
  "eu-south-2": 3,
  "af-south-1": 3,
  "me-south-1": 3,
  "me-central-1": 3,
  "il-central-1": 3,
  "ap-east-1": 3,
  "ap-south-1": 3,
  "ap-south-2": 3,
  "ap-northeast-1": 3,
  "ap-northeast-2": 4,
  "ap-northeast-3": 3,
  "ap-southeast-1": 3,
  "ap-southeast-2": 3,
  "ap-southeast-3": 3,
  "ap-southeast-4": 3,
  "us-gov-west-1": 3,
  "us-gov-east-1": 3,
};

/** Why `count` zones cannot be had in `region`, or undefined when they can (or the region is unknown). */
export function availabilityZoneProblem(region: string, count: number): string | undefined {
  const available = REGION_AVAILABILITY_ZONES[region];
  if (available === undefined || count <= available) return undefined;
  return `${region} has ${available} availability zone(s), so ${count} cannot be used; set availabilityZoneCount to at most ${available} or choose another region`;
}

/**
 * Picks the first `count` zone names AWS reported, in a stable (sorted) order, or explains
 * which setting to change. Used by the cluster component on the getAvailabilityZones result.
 */
export function pickAvailabilityZones(region: string, names: readonly string[], count: number): string[] {
  const sorted = [...names].sort();
  if (sorted.length < count) {
    throw new Error(
      `availabilityZoneCount: ${region} offers this account ${sorted.length} zone(s) (${sorted.join(", ") || "none"}), so ${count} cannot be used; lower availabilityZoneCount`,
    );
  }
  return sorted.slice(0, count);
}
