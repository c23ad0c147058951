import type { PageEvent } from './watch-view.ts';

export const isEmailGate = (event: PageEvent) => event.event_type === 'simple_email';

/**
 * What the player's first email gate holds back from a visitor who has not passed it: every chapter
 * from `withheldFrom` on (Infinity: none), and the chapter `cut.index` only after `cut.second` (a
 * gate at a later second: the chapter plays up to it).
 */
export interface GatePlan {
  withheldFrom: number;
  cut: { index: number; second: number } | null;
}

export const OPEN: GatePlan = { withheldFrom: Infinity, cut: null };

/**
 * The first chapter with an email gate decides: from its start when the gate opens at second 0, up
 * to its second for a later gate, the whole chapter for a postroll gate (second -1); every later
 * chapter is held back. A gate the viewer may skip (`closeable`) holds nothing back.
 */
export function gatePlan(eventsByChapter: PageEvent[][]): GatePlan {
  for (const [index, events] of eventsByChapter.entries()) {
    const gate = events
      .filter((e) => isEmailGate(e) && !e.closeable)
      .sort((a, b) => (a.second < 0 ? Infinity : a.second) - (b.second < 0 ? Infinity : b.second))[0];
    if (!gate) continue;
    if (gate.second === 0) return { withheldFrom: index, cut: null };
    return { withheldFrom: index + 1, cut: gate.second > 0 ? { index, second: gate.second } : null };
  }
  return OPEN;
}

export const isOpen = (plan: GatePlan) => plan.withheldFrom === Infinity && plan.cut === null;

/** How much of a video a visitor who has not passed the gate may fetch: all, none, or up to a second. */
export type Allowance = { kind: 'all' } | { kind: 'none' } | { kind: 'until'; second: number };

/** The most a chapter of the video allows (`videoIds`: each chapter's video, in chapter order). */
export function allowanceOf(plan: GatePlan, videoIds: Array<number | null>, videoId: number): Allowance {
  let best: Allowance = { kind: 'none' };
  for (const [index, id] of videoIds.entries()) {
    if (id !== videoId || index >= plan.withheldFrom) continue;
    if (plan.cut?.index !== index) return { kind: 'all' };
    best = { kind: 'until', second: plan.cut.second };
  }
  return best;
}
