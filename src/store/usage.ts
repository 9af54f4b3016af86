import type { UsageEvent } from './types.ts';

export interface UsageIncrement {
  keyId: string;
  day: string;
  endpoint: string;
  requests: number;
  monthly: number;
}

/** Folds a batch of events into one increment per (key, day, endpoint), in first-seen order. */
export function aggregateUsage(events: readonly UsageEvent[]): UsageIncrement[] {
  const rows = new Map<string, UsageIncrement>();
  for (const e of events) {
    const id = `${e.keyId}\u0000${e.day}\u0000${e.endpoint}`;
    let row = rows.get(id);
    if (!row) {
      row = { keyId: e.keyId, day: e.day, endpoint: e.endpoint, requests: 0, monthly: 0 };
      rows.set(id, row);
    }
    row.requests++;
    if (e.countedMonthly) row.monthly++;
  }
  return [...rows.values()];
}
