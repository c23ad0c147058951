import type { FastifyInstance } from 'fastify';

/** The player configuration a page hands its script. */
export function configOf(html: string): any {
  const m = /<script type="application\/json" id="reelbase-config">([\s\S]*?)<\/script>/.exec(html);
  if (!m) throw new Error(`no player configuration in:\n${html}`);
  return JSON.parse(m[1]);
}

/**
 * The path under which a viewer of the player's watch page fetches its media, `/play/<uuid>/<grant>`,
 * read from the page as a viewer's browser would (the first chapter's first source).
 */
export async function playbackBase(app: FastifyInstance, uuid: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await app.inject({ method: 'GET', url: `/watch/${uuid}`, headers });
  if (res.statusCode !== 200) throw new Error(`the watch page answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
  const src: string | undefined = configOf(res.body).chapters[0]?.sources[0]?.src;
  const m = src ? /^https?:\/\/[^/]+(\/play\/[^/]+\/[^/]+)\//.exec(src) : null;
  if (!m) throw new Error(`no playback address in the page: ${src}`);
  return m[1];
}
