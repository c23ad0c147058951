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

/** An embedding page's host name and port ('' for the scheme's default), from its URL; null when there is none. */
export function originOf(url: string | undefined): { host: string; port: string } | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return { host: u.hostname.toLowerCase(), port: u.port };
  } catch {
    return null;
  }
}

/**
 * Whether an embedding page is on an allowed domain: one of the domains or under one of them, on the
 * entry's port when it names one (`staging.example.com:8443`), else on the default port (as the
 * page's CSP frame-ancestors allows it).
 */
export function domainAllows(domains: string[], from: { host: string; port: string }): boolean {
  return domains.some((entry) => {
    const [d, port = ''] = entry.split(':');
    return (from.host === d || from.host.endsWith(`.${d}`)) && from.port === port;
  });
}

/**
 * An allowed-domain entry as stored (`example.com`, `staging.example.com:8443`, or an origin such as
 * `https://staging.example.com:8443/`), reduced to `host` or `host:port`; null when it names none.
 */
function embedEntry(raw: string): string | null {
  let entry = raw.trim().toLowerCase();
  if (entry.includes('://')) {
    try {
      const u = new URL(entry);
      entry = u.port ? `${u.hostname}:${u.port}` : u.hostname;
    } catch {
      return null;
    }
  }
  entry = entry.replace(/\/+$/, '').replace(/\.(?=:|$)/, '');
  const match = /^([a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(entry);
  if (!match || !match[1].includes('.') || (match[2] !== undefined && (Number(match[2]) < 1 || Number(match[2]) > 65535))) return null;
  return entry;
}

/** The domains allowed to embed: the player's list and, when enabled, its access manager's; null when neither restricts. */
export function embedDomains(player: WatchPlayerRow, access: WatchAccessRow | undefined): string[] | null {
  const domains = parseStringList(player.whitelisted_embed_domains);
  if (access?.whitelisted_domains_enabled) domains.push(...parseStringList(access.whitelisted_domains));
  const cleaned = [...new Set(domains.map(embedEntry).filter((d): d is string => d !== null))];
  return cleaned.length > 0 ? cleaned : null;
}

/** Scales width × height down to fit maxwidth × maxheight, keeping the aspect ratio (oEmbed). */
export function fitInto(width: number, height: number, maxWidth?: number, maxHeight?: number): { width: number; height: number } {
  let scale = 1;
  if (maxWidth !== undefined && width > maxWidth) scale = Math.min(scale, maxWidth / width);
  if (maxHeight !== undefined && height > maxHeight) scale = Math.min(scale, maxHeight / height);
  return { width: Math.max(1, Math.floor(width * scale)), height: Math.max(1, Math.floor(height * scale)) };
}
