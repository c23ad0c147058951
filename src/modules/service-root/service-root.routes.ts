import { Type } from 'typebox';
import type { App, Deps } from '../../http/context.ts';

const ServiceRoot = Type.Object({
  playback_domain: Type.String(),
  embed_domain: Type.String(),
});

export default async function serviceRootRoutes(app: App, { config }: Deps) {
  app.get(
    '/v1',
    {
      schema: { tags: ['service'], summary: 'Service root: playback and embed domains', response: { 200: ServiceRoot } },
    },
    async () => ({ playback_domain: config.playbackDomain, embed_domain: config.embedDomain }),
  );
}
