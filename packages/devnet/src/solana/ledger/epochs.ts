/**
 * agave's `EpochSchedule` arithmetic, warmup included: epochs of 32, 64, 128... slots until the first
 * normal epoch, then `slotsPerEpoch` each.
 *
 * @module
 */

/** An epoch schedule as LiteSVM's sysvar holds it. */
export interface EpochScheduleLike {
  /** Slots in a normal epoch. */
  readonly slotsPerEpoch: bigint;
  /** How far ahead the leader schedule is known. */
  readonly leaderScheduleSlotOffset: bigint;
  /** Whether the first epochs are short. */
  readonly warmup: boolean;
  /** The first epoch of normal length. */
  readonly firstNormalEpoch: bigint;
  /** Its first slot. */
  readonly firstNormalSlot: bigint;
}

const MINIMUM_SLOTS_PER_EPOCH = 32n;

/** The epoch of `slot` and the slot's index in it. */
export function epochOf(schedule: EpochScheduleLike, slot: bigint): { epoch: bigint; slotIndex: bigint } {
  if (schedule.warmup && slot < schedule.firstNormalSlot) {
    // agave: (slot + 33).next_power_of_two().trailing_zeros() - 5 - 1
    let power = 1n;
    let zeros = 0n;
    while (power < slot + MINIMUM_SLOTS_PER_EPOCH + 1n) { power <<= 1n; zeros += 1n; }
    const epoch = zeros - 5n - 1n;
    const length = 1n << (epoch + 5n);
    return { epoch, slotIndex: slot - (length - MINIMUM_SLOTS_PER_EPOCH) };
  }
  const normal = slot - (schedule.warmup ? schedule.firstNormalSlot : 0n);
  return { epoch: (schedule.warmup ? schedule.firstNormalEpoch : 0n) + normal / schedule.slotsPerEpoch, slotIndex: normal % schedule.slotsPerEpoch };
}

/** Slots in `epoch`. */
export function slotsInEpoch(schedule: EpochScheduleLike, epoch: bigint): bigint {
  return schedule.warmup && epoch < schedule.firstNormalEpoch ? 1n << (epoch + 5n) : schedule.slotsPerEpoch;
}

/** The first slot of `epoch`. */
export function firstSlotOfEpoch(schedule: EpochScheduleLike, epoch: bigint): bigint {
  if (!schedule.warmup) return epoch * schedule.slotsPerEpoch;
  if (epoch <= schedule.firstNormalEpoch) return ((1n << epoch) - 1n) * MINIMUM_SLOTS_PER_EPOCH;
  return schedule.firstNormalSlot + (epoch - schedule.firstNormalEpoch) * schedule.slotsPerEpoch;
}
