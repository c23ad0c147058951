import { pageOf, type Listing, type Page } from '../lib/paging.ts';
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

type PagingParams = { per_page?: number; page?: number };

/** Reads the page asked for, lists it, and answers the reference's way (arrayOrEnvelope). */
export async function answerArrayOrEnvelope<K extends string, T>(key: K, query: PagingParams, cap: number, list: (page: Page) => Promise<Listing<T>>) {
  const page = pageOf(query, cap);
  const { items, total } = await list(page);
  return arrayOrEnvelope(key, items, page, total);
}

/** Reads the page asked for, lists it, and answers the `{<key>, summary}` envelope. */
export async function answerEnvelope<K extends string, T>(key: K, query: PagingParams, cap: number, list: (page: Page) => Promise<Listing<T>>) {
  const page = pageOf(query, cap);
  const { items, total } = await list(page);
  return listEnvelope(key, items, page, total);
}
