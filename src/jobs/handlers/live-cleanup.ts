import fsp from 'node:fs/promises';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { liveDir } from '../../live/paths.ts';
import { LiveRepository } from '../../modules/live/live.repository.ts';
import type { JobHandler } from '../runner.ts';

export interface LiveCleanupPayload {
  player_uuid: string;
}

/** `live.cleanup`: removes a deleted instance's HLS output (DATA_DIR/live/<player uuid>). */
export function liveCleanupHandler({ config, database }: { config: Config; database: Database }): JobHandler {
  const live = new LiveRepository(database.db);
  return async (payload: LiveCleanupPayload) => {
    if (!/^[0-9a-f-]{1,64}$/i.test(payload.player_uuid)) return;
    // Only output no instance owns any more.
    if (await live.findByPlayerUuid(payload.player_uuid)) return;
    await fsp.rm(liveDir(config.dataDir, payload.player_uuid), { recursive: true, force: true });
  };
}
