import { router } from './trpc.js';
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
});

export type AppRouter = typeof appRouter;
