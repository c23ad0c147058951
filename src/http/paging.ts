import type { Page } from '../lib/paging.ts';
import type { Summary } from '../lib/schemas.ts';

/** Summary of a list: `count` is the total, `per_page` the page size (the number returned when not paged). */
export function summaryOf(page: Page, total: number, returned: number): Summary {
  return { page: page.page, per_page: page.paged ? page.perPage : returned, count: total };
}

/** The envelope `{<key>: items, summary}` used by the paged list operations. */
export function listEnvelope<K extends string, T>(key: K, items: T[], page: Page, total: number) {
  return { [key]: items, summary: summaryOf(page, total, items.length) } as { [P in K]: T[] } & { summary: Summary };
}

/**
 * DESIGN §2's rule for the reference's older lists (players, videos, accounts, …): a bare array
 * without per_page, the `{<key>: items, summary}` envelope with it.
 */
export function arrayOrEnvelope<K extends string, T>(key: K, items: T[], page: Page, total: number) {
  return page.paged ? listEnvelope(key, items, page, total) : items;
}
