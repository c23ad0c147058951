import type { App, Deps } from '../http/context.ts';
import serviceRootRoutes from './service-root/service-root.routes.ts';
import promptsRoutes from './prompts/prompts.routes.ts';
import tagsRoutes from './tags/tags.routes.ts';
import playersRoutes from './players/players.routes.ts';
import chaptersRoutes from './chapters/chapters.routes.ts';
import videosRoutes from './videos/videos.routes.ts';
import ctasRoutes from './ctas/ctas.routes.ts';
import eventsRoutes from './events/events.routes.ts';
import organizationsRoutes from './organizations/organizations.routes.ts';
import rolesRoutes from './roles/roles.routes.ts';
import usersRoutes from './users/users.routes.ts';
import sessionsRoutes from './sessions/sessions.routes.ts';
import tokensRoutes from './tokens/tokens.routes.ts';
import teamsRoutes from './teams/teams.routes.ts';
import allotmentsRoutes from './allotments/allotments.routes.ts';
import captionsRoutes from './captions/captions.routes.ts';
import thumbnailsRoutes from './thumbnails/thumbnails.routes.ts';
import ipRangesRoutes from './ip-ranges/ip-ranges.routes.ts';
import accessManagersRoutes from './access-managers/access-managers.routes.ts';
import stakeholderEmailsRoutes from './stakeholder-emails/stakeholder-emails.routes.ts';
import liveRoutes from './live/live.routes.ts';
import gdprRoutes from './gdpr/gdpr.routes.ts';
import { oembedRoutes } from './watch/watch.routes.ts';
import webhooksRoutes from './webhooks/webhooks.routes.ts';
import hubsRoutes from './hubs/hubs.routes.ts';
import uploadsRoutes from './uploads/uploads.routes.ts';
import analyticsRoutes from './analytics/analytics.routes.ts';

type RoutesPlugin = (app: App, deps: Deps) => Promise<void>;

/** Every area's routes, mounted under /dashboard. */
export const dashboardModules: RoutesPlugin[] = [
  serviceRootRoutes,
  playersRoutes,
  chaptersRoutes,
  videosRoutes,
  promptsRoutes,
  tagsRoutes,
  ctasRoutes,
  eventsRoutes,
  organizationsRoutes,
  rolesRoutes,
  usersRoutes,
  sessionsRoutes,
  tokensRoutes,
  teamsRoutes,
  allotmentsRoutes,
  captionsRoutes,
  ipRangesRoutes,
  accessManagersRoutes,
  stakeholderEmailsRoutes,
  liveRoutes,
  thumbnailsRoutes,
  gdprRoutes,
  oembedRoutes,
  webhooksRoutes,
  hubsRoutes,
  uploadsRoutes,
  analyticsRoutes,
];
