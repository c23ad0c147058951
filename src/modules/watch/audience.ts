import type { IpRangesService } from '../ip-ranges/ip-ranges.service.ts';
import type { WatchPlayerRow } from './watch.repository.ts';
import { expired, released } from './watch-rules.ts';
import type { Refusal } from './watch-view.ts';

/**
 * Who may see a player now, whatever they ask for (the page, a media file, a caption, a live
 * segment, the oEmbed description, a viewer's report): not an address in the organization's blocked
 * ranges, and only within the player's release window.
 */
export class Audience {
  constructor(private readonly ipRanges: IpRangesService) {}

  /** null: this address may see the player now; else why not. */
  async refusal(player: WatchPlayerRow, ip: string, now: number): Promise<Refusal | null> {
    if (await this.ipRanges.isBlocked(player.organization_id, ip)) {
      return { reason: 'blocked', title: 'Not available', message: 'This video is not available from your network.' };
    }
    if (!released(player, now)) {
      return {
        reason: 'not_released',
        title: 'Not released yet',
        message: `This video will be available from ${new Date(player.release_date * 1000).toUTCString()}.`,
      };
    }
    if (expired(player, now)) return { reason: 'expired', title: 'Video expired', message: 'This video is no longer available.' };
    return null;
  }
}
