// How a debit of a balance that tracks fund lineage is split over its tagged funds, by the balance's
// allocation strategy (Blnk's lineage_allocation.go), in exact integer arithmetic:
//   FIFO          the provider whose funds arrived first is drawn on first, then the next;
//   LIFO          the provider whose funds arrived last is drawn on first;
//   PROPORTIONAL  every provider gives in proportion to what it has available, split by the largest
//                 remainder rule: each gets the floor of its exact share, and the units those floors
//                 leave over go one each to the largest fractional remainders (ties to the provider whose
//                 funds arrived first). The shares always sum to the amount drawn: no unit is lost or
//                 made up, where Blnk's floors plus "the last takes the rest, capped" can fall short.
// Only tagged funds are allocated: a debit larger than them takes the rest from untagged funds, which
// lineage does not follow (the shares then sum to less than the debit, as in Blnk).

/** Blnk's allocation strategies; FIFO is the default. */
export const ALLOCATION_STRATEGIES = ['FIFO', 'LIFO', 'PROPORTIONAL'] as const;
export type AllocationStrategy = (typeof ALLOCATION_STRATEGIES)[number];

/** One provider's funds that a debit may draw on, listed in the order the provider's funds first arrived. */
export interface FundSource {
  provider: string;
  available: bigint;
}

/** What a transaction took from, or brought in, of one provider's funds. */
export interface FundShare {
  provider: string;
  amount: bigint;
}

/** The shares of `amount` (positive) drawn from `sources`, in the order they are drawn; none are zero. */
export function allocate(strategy: AllocationStrategy, sources: readonly FundSource[], amount: bigint): FundShare[] {
  const funded = sources.filter((source) => source.available > 0n);
  if (funded.length === 0 || amount <= 0n) return [];
  switch (strategy) {
    case 'FIFO':
      return drawInOrder(funded, amount);
    case 'LIFO':
      return drawInOrder([...funded].reverse(), amount);
    case 'PROPORTIONAL':
      return drawInProportion(funded, amount);
  }
}

/** Each source in turn gives all it has until the amount is met. */
function drawInOrder(sources: readonly FundSource[], amount: bigint): FundShare[] {
  const shares: FundShare[] = [];
  let left = amount;
  for (const source of sources) {
    if (left === 0n) break;
    const taken = source.available < left ? source.available : left;
    shares.push({ provider: source.provider, amount: taken });
    left -= taken;
  }
  return shares;
}

/** Hamilton's largest remainder apportionment of min(amount, total) over the sources' available funds. */
function drawInProportion(sources: readonly FundSource[], amount: bigint): FundShare[] {
  let total = 0n;
  for (const source of sources) total += source.available;
  const drawn = amount < total ? amount : total;
  const floors = sources.map((source) => (drawn * source.available) / total);
  const remainders = sources.map((source) => (drawn * source.available) % total);
  let leftOver = drawn - floors.reduce((sum, floor) => sum + floor, 0n);
  // Fewer units are left over than there are sources, and a source with a remainder has room for one
  // more unit (its exact share is below what it has), so no share passes what its source has.
  const byRemainder = sources.map((_, index) => index).sort((a, b) => {
    const difference = (remainders[b] as bigint) - (remainders[a] as bigint);
    return difference > 0n ? 1 : difference < 0n ? -1 : a - b;
  });
  for (const index of byRemainder) {
    if (leftOver === 0n) break;
    floors[index] = (floors[index] as bigint) + 1n;
    leftOver -= 1n;
  }
  const shares: FundShare[] = [];
  sources.forEach((source, index) => {
    const share = floors[index] as bigint;
    if (share > 0n) shares.push({ provider: source.provider, amount: share });
  });
  return shares;
}

/**
 * The part of `shares`, taken in their order, that lies between `from` and `from + amount`: what a commit
 * of `amount` settles of a hold whose first `from` was committed before (a hold is settled in the order
 * its funds were allocated, tagged funds first, then any untagged rest).
 */
export function sharesBetween(shares: readonly FundShare[], from: bigint, amount: bigint): FundShare[] {
  const part: FundShare[] = [];
  let start = 0n;
  const end = from + amount;
  for (const share of shares) {
    const shareEnd = start + share.amount;
    const low = start > from ? start : from;
    const high = shareEnd < end ? shareEnd : end;
    if (high > low) part.push({ provider: share.provider, amount: high - low });
    start = shareEnd;
  }
  return part;
}

/** The sum of the shares' amounts. */
export function sharesTotal(shares: readonly FundShare[]): bigint {
  let total = 0n;
  for (const share of shares) total += share.amount;
  return total;
}
