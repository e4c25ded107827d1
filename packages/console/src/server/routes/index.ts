/** Every resource's routes, in the order they are registered under `/api/v1`. */
import type { ConsoleRoutes } from '../app.js';
import { namespaceRoutes } from './namespaces.js';
import { jobRoutes } from './jobs.js';
import { jobHistoryRoutes } from './job-history.js';
import { importExportRoutes } from './import-export.js';
import { authRoutes } from './auth.js';
import { userRoutes } from './users.js';
import { tokenRoutes } from './tokens.js';
import { auditRoutes } from './audit.js';
import { runRoutes } from './runs.js';
import { shardRoutes } from './shards.js';
import { executorRoutes } from './executors.js';
import { assignmentRoutes } from './assignment.js';
import { cronRoutes } from './cron.js';
import { statsRoutes } from './stats.js';
import { eventRoutes } from './events.js';

export const ALL_ROUTES: readonly ConsoleRoutes[] = [
  namespaceRoutes,
  jobRoutes,
  jobHistoryRoutes,
  importExportRoutes,
  authRoutes,
  userRoutes,
  tokenRoutes,
  auditRoutes,
  runRoutes,
  shardRoutes,
  executorRoutes,
  assignmentRoutes,
  cronRoutes,
  statsRoutes,
  eventRoutes,
];
