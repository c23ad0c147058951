import { NotAVideoError, ToolError } from './ffmpeg.ts';
import { SafeFetchError } from '../net/safe-fetch.ts';

/**
 * What a media job failure means for the user: the `error_message` to record, and whether trying
 * again could help (network trouble, 5xx, a killed ffmpeg) or not (refused address, 404, too large,
 * not a video, an ffmpeg error on the file).
 */
export function describeMediaFailure(err: unknown, what: string, workDir?: string): { message: string; permanent: boolean } {
  const scrub = (text: string) => (workDir ? text.split(workDir).join('') : text).slice(0, 500);
  if (err instanceof SafeFetchError) {
    if (err.kind === 'too_large') return { message: `The ${what} is too large: ${err.message}`, permanent: true };
    if (err.kind === 'refused_address') return { message: `The ${what} was refused: ${err.message}`, permanent: true };
    return { message: `The ${what} could not be fetched: ${err.message}`, permanent: err.permanent };
  }
  if (err instanceof NotAVideoError) return { message: `The ${what} is not a video: ${err.message}`, permanent: true };
  if (err instanceof ToolError) return { message: scrub(`Processing the ${what} failed: ${err.message}`), permanent: !err.transient };
  const message = err instanceof Error ? err.message : String(err);
  return { message: scrub(`Processing the ${what} failed: ${message}`), permanent: false };
}
