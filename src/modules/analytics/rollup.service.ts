import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { scheduleRecurring } from '../housekeeping/recurring.ts';
import { DistinctSketch } from './distinct-sketch.ts';
import type { DayFigures, DayKey, DaySketches, RollupRepository } from './rollup.repository.ts';

export interface RollupOptions {
  /** Seconds from one run to the next (ANALYTICS_ROLLUP_SECONDS): the freshness of the rolled-up figures. */
  intervalSeconds: number;
  /** Report ids per transaction. */
  batchSize?: number;
}

/** What one run added. */
export interface RollupResult {
  /** The last report id now rolled up. */
  last_event_id: number;
  batches: number;
  /** Whether it reached the last settled report (false: stopped by its signal). */
  complete: boolean;
}

const TASK = 'analytics-rollup' as const;
const NO_FIGURES = { loads: 0, plays: 0, views: 0, completions: 0, watch_seconds: 0, cta_clicks: 0 };

/**
 * The daily rollups of the stored reports (docs/analytics.md, "Rollups"): a recurring job adds the
 * reports stored since its last run to each player's day (additive figures, and sketches of the
 * distinct viewers and addresses) and to each organization's day (sketches). Each batch is one
 * transaction that also moves `analytics_rollup.last_event_id`, so a report is added once, whatever
 * the number of workers and whenever one dies.
 */
export class RollupService {
  private readonly batchSize: number;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly options: RollupOptions,
    private readonly repo: RollupRepository,
  ) {
    this.batchSize = options.batchSize ?? 20_000;
  }

  /** Makes sure a run is queued; at most one is, however many workers ask. */
  schedule(delayMs = 0): Promise<boolean> {
    return scheduleRecurring(this.db, TASK, delayMs);
  }

  /** One run of the `analytics.rollup` job: the next is queued first, then the reports are added. */
  async run(signal?: AbortSignal): Promise<RollupResult> {
    await this.schedule(this.options.intervalSeconds * 1000);
    return this.catchUp(signal);
  }

  /** Adds every settled report not yet rolled up, batch by batch. */
  async catchUp(signal?: AbortSignal): Promise<RollupResult> {
    const bound = await this.repo.settledMaxId();
    let from = await this.repo.progress();
    let batches = 0;
    while (from < bound) {
      if (signal?.aborted) return { last_event_id: from, batches, complete: false };
      const to = Math.min(from + this.batchSize, bound);
      // Read outside the transaction, which then only writes: the reports up to `bound` are committed.
      // (One erased by a GDPR request meanwhile may still be counted: rollups keep figures and hashes.)
      const figures = await this.repo.figuresOf(from, to);
      const distinct = await this.repo.distinctOf(from, to);
      const applied = await this.db.transaction().execute(async (trx) => {
        const repo = this.repo.with(trx);
        if ((await repo.lockProgress()) !== from) return false;
        await this.apply(repo, figures, distinct);
        await repo.setProgress(to);
        return true;
      });
      if (applied) {
        batches++;
        from = to;
      } else {
        // Another worker's run moved on meanwhile: go on from where it is.
        from = await this.repo.progress();
      }
    }
    return { last_event_id: from, batches, complete: true };
  }

  private async apply(repo: RollupRepository, figures: DayFigures[], distinct: Array<DayKey & { kind: 'viewers' | 'emails'; value: string }>) {
    const dayKey = (k: DayKey) => `${k.organization_id}:${k.day}:${k.player_id}`;
    const orgKey = (k: { organization_id: number; day: number }) => `${k.organization_id}:${k.day}`;
    const days = new Map<string, DayFigures>();
    for (const f of figures) days.set(dayKey(f), f);
    for (const d of distinct)
      if (!days.has(dayKey(d))) days.set(dayKey(d), { ...NO_FIGURES, organization_id: d.organization_id, player_id: d.player_id, day: d.day });

    const sketchesOf = (kept?: DaySketches) => ({ viewers: DistinctSketch.from(kept?.viewers), emails: DistinctSketch.from(kept?.emails) });
    const keptDays = new Map((await repo.daySketches([...days.values()])).map((r) => [dayKey(r), r]));
    const orgDays = new Map<string, { organization_id: number; day: number }>();
    for (const d of days.values()) orgDays.set(orgKey(d), { organization_id: d.organization_id, day: d.day });
    const keptOrgDays = new Map((await repo.orgDaySketches([...orgDays.values()])).map((r) => [orgKey(r), r]));

    const daySketches = new Map([...days.keys()].map((k) => [k, sketchesOf(keptDays.get(k))]));
    const orgSketches = new Map([...orgDays.keys()].map((k) => [k, sketchesOf(keptOrgDays.get(k))]));
    for (const d of distinct) {
      const hash = DistinctSketch.hash(d.value);
      daySketches.get(dayKey(d))![d.kind].addHash(hash);
      orgSketches.get(orgKey(d))![d.kind].addHash(hash);
    }
    await repo.addToDays(
      [...days.entries()].map(([k, d]) => {
        const s = daySketches.get(k)!;
        return { ...d, viewers: s.viewers.toBuffer(), emails: s.emails.toBuffer() };
      }),
    );
    await repo.setOrgDays(
      [...orgDays.entries()].map(([k, o]) => {
        const s = orgSketches.get(k)!;
        return { ...o, viewers: s.viewers.toBuffer(), emails: s.emails.toBuffer() };
      }),
    );
  }
}
