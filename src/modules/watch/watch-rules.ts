import { parseStringList } from '../../lib/json-list.ts';
import type { WatchAccessRow, WatchPlayerRow } from './watch.repository.ts';
import type { Refusal } from './watch-view.ts';

/** What a player UUID in an address may look like; anything else is answered like an unknown player. */
export const UUID = /^[0-9a-fA-F-]{1,64}$/;
export const UUID_PATH = /^\/(watch|embed)\/([0-9a-fA-F-]{1,64})\/?$/;
export const NOT_FOUND: Refusal = { reason: 'not_found', title: 'Video not found', message: 'There is no video at this address.' };

/** Whether the player is shown now: released, and not expired (an expiry of 0 means none). */
export const released = (player: WatchPlayerRow, now: number) => player.release_date <= now;
export const expired = (player: WatchPlayerRow, now: number) => player.expiry_date !== null && player.expiry_date > 0 && player.expiry_date <= now;
export const showing = (player: WatchPlayerRow, now: number) => released(player, now) && !expired(player, now);

/** The host of an absolute URL, lower-cased, or null. */
export function hostOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** A host is allowed by a domain list when it is one of the domains or under one of them. */
export function domainAllows(domains: string[], host: string): boolean {
  return domains.some((d) => host === d || host.endsWith(`.${d}`));
}

/** The domains allowed to embed: the player's list and, when enabled, its access manager's; null when neither restricts. */
export function embedDomains(player: WatchPlayerRow, access: WatchAccessRow | undefined): string[] | null {
  const domains = parseStringList(player.whitelisted_embed_domains).map((d) => d.toLowerCase().replace(/\.$/, ''));
  if (access?.whitelisted_domains_enabled) domains.push(...parseStringList(access.whitelisted_domains));
  const cleaned = [...new Set(domains.filter((d) => /^[a-z0-9.-]+$/.test(d) && d.includes('.')))];
  return cleaned.length > 0 ? cleaned : null;
}

/** Scales width × height down to fit maxwidth × maxheight, keeping the aspect ratio (oEmbed). */
export function fitInto(width: number, height: number, maxWidth?: number, maxHeight?: number): { width: number; height: number } {
  let scale = 1;
  if (maxWidth !== undefined && width > maxWidth) scale = Math.min(scale, maxWidth / width);
  if (maxHeight !== undefined && height > maxHeight) scale = Math.min(scale, maxHeight / height);
  return { width: Math.max(1, Math.floor(width * scale)), height: Math.max(1, Math.floor(height * scale)) };
}
