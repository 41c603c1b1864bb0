import { router, type Meta } from './trpc.js';
import { isAtomic } from './middleware/atomic.js';
import { authRouter } from './auth/router.js';
import { keysRouter } from './keys/router.js';
import { meRouter } from './me/router.js';
import { tagsRouter } from './tags/router.js';
import { settingsRouter } from './settings/router.js';
import { containersRouter } from './containers/router.js';
import { notesRouter } from './notes/router.js';
import { noteFoldersRouter } from './note-folders/router.js';
import { noteVersionsRouter } from './note-versions/router.js';
import { trashRouter } from './trash/router.js';
import { headingsRouter } from './headings/router.js';
import { todosRouter } from './todos/router.js';
import { viewsRouter } from './views/router.js';
import { filtersRouter } from './filters/router.js';
import { searchRouter } from './search/router.js';
import { linkTitleRouter } from './link-title/router.js';
import { attachmentsRouter } from './attachments/router.js';
import { inboxRouter } from './inbox/router.js';
import { webhooksRouter } from './webhooks/router.js';
import { approvalsRouter } from './approvals/router.js';
import { grantsRouter } from './grants/router.js';
import { importsRouter } from './imports/router.js';
import { liveRouter } from './live/router.js';

export const appRouter = router({
  auth: authRouter,
  keys: keysRouter,
  me: meRouter,
  tags: tagsRouter,
  settings: settingsRouter,
  containers: containersRouter,
  notes: notesRouter,
  noteFolders: noteFoldersRouter,
  noteVersions: noteVersionsRouter,
  trash: trashRouter,
  headings: headingsRouter,
  todos: todosRouter,
  views: viewsRouter,
  filters: filtersRouter,
  search: searchRouter,
  linkTitle: linkTitleRouter,
  attachments: attachmentsRouter,
  inbox: inboxRouter,
  webhooks: webhooksRouter,
  approvals: approvalsRouter,
  grants: grantsRouter,
  imports: importsRouter,
  live: liveRouter,
});

export type AppRouter = typeof appRouter;

/**
 * Issue 10: an Idempotent route stores its answer in the transaction of its change, which only
 * `atomic(…)` does (routers/middleware/atomic.ts). A route marked idempotent whose resolver is not
 * wrapped would write without storing; refuse to start with one.
 */
export function unatomicIdempotentProcedures(): string[] {
  const procs = appRouter._def.procedures as unknown as Record<string, { _def: { type: string; meta?: Meta; resolver?: unknown } }>;
  return Object.entries(procs)
    .filter(([, p]) => p._def.type === 'mutation' && p._def.meta?.idempotent && !isAtomic(p._def.resolver))
    .map(([path]) => path);
}
const unatomic = unatomicIdempotentProcedures();
if (unatomic.length) throw new Error(`Idempotent procedures without atomic(): ${unatomic.join(', ')}`);
