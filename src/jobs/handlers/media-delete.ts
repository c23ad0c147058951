import type { Config } from '../../config.ts';
import { createMedia } from '../../media/media.ts';
import type { MediaDeletePayload } from '../../modules/videos/video-jobs.ts';
import type { JobHandler } from '../runner.ts';

/** `media.delete`: removes store folders whose immediate removal failed (retried until it works). */
export function mediaDeleteHandler({ config }: { config: Config }): JobHandler {
  const media = createMedia(config);
  return async (payload: MediaDeletePayload) => {
    for (const prefix of payload.prefixes) await media.store.delete(prefix);
  };
}
