/** Every resource's routes, in the order they are registered under `/api/v1`. */
import type { ConsoleRoutes } from '../app.js';
import { namespaceRoutes } from './namespaces.js';

export const ALL_ROUTES: readonly ConsoleRoutes[] = [
  namespaceRoutes,
];
