import { parseStringList } from '../../lib/json-list.ts';
import type { WatchAccessRow, WatchPlayerRow } from './watch.repository.ts';
import type { Refusal } from './watch-view.ts';

/** What a player UUID in an address may look like; anything else is answered like an unknown player. */
export const UUID = /^[0-9a-fA-F-]{1,64}$/;
export const UUID_PATH = /^\/(watch|embed)\/([0-9a-fA-F-]{1,64})\/?$/;
export const NOT_FOUND: Refusal = { reason: 'not_found', title: 'Video not found', message: 'There is no video at this address.' };

/** A player's release window, as its row and its API resource both carry it. */
type ReleaseWindow = Pick<WatchPlayerRow, 'release_date' | 'expiry_date'>;

/** The expiry, or null when there is none (unset, or 0). */
export const expiryOf = (player: ReleaseWindow) => (player.expiry_date !== null && player.expiry_date > 0 ? player.expiry_date : null);

/** Whether the player is shown now: released, and not expired. */
export const released = (player: ReleaseWindow, now: number) => player.release_date <= now;
export const expired = (player: ReleaseWindow, now: number) => {
  const expiry = expiryOf(player);
  return expiry !== null && expiry <= now;
};

/** The total length of a player's videos in seconds, when every one's is known. */
export function totalSeconds(videos: Array<{ seconds: number | null } | null | undefined>): number | null {
  if (videos.length === 0 || !videos.every((v) => typeof v?.seconds === 'number')) return null;
  return videos.reduce((sum, v) => sum + (v?.seconds ?? 0), 0);
}

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
