import type { App, Deps } from '../http/context.ts';
import serviceRootRoutes from './service-root/service-root.routes.ts';

type RoutesPlugin = (app: App, deps: Deps) => Promise<void>;

/** Every area's routes, mounted under /dashboard. */
export const dashboardModules: RoutesPlugin[] = [serviceRootRoutes];
