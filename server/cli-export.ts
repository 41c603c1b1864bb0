// `cairn export --email <email> [--out FILE]` (`npm run cli -- export …`; issue 33 item 2,
// docs/api.md "Export"): the account's whole content, opened, as the JSON document GET /v1/export
// streams (routers/export/stream.ts, docs/export-schema.json), to stdout or to FILE. It asks for
// the account's password as every CLI command does (server/cli.ts readPassword), opens a session
// for the run and ends it after. A file is written beside its final name and renamed into place
// once complete (mode 0600: it is every piece of content in the clear), so a cut-short export never
// stands as the file.
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { Deps } from '../routers/deps.js';
import { appRouter } from '../routers/index.js';
import { createCallerFactory, createContextInner } from '../routers/trpc.js';
import { authenticate } from '../routers/auth/credentials.js';
import { exportPieces } from '../routers/export/stream.js';
import { calendarIcs } from '../dav/calendar-ics.js';

const callerFactory = createCallerFactory(appRouter);
const caller = (deps: Deps, token?: string) => callerFactory(createContextInner({ deps, requestId: 'cli', authorization: token ? `Bearer ${token}` : undefined }));

/** Writes every piece to `out`, waiting for 'drain' when it asks to. */
async function pipeTo(pieces: AsyncIterable<string> | Iterable<string>, out: Writable): Promise<void> {
  for await (const piece of pieces) {
    if (!out.write(piece)) await new Promise<void>((resolve, reject) => {
      out.once('drain', resolve);
      out.once('error', reject);
    });
  }
}

/** Logs in as `email`, runs `fn` with the session's principal, logs out whatever happens. */
export async function withSession<T>(deps: Deps, email: string, password: string, fn: (p: Awaited<ReturnType<typeof authenticate>>) => Promise<T>): Promise<T> {
  const { token } = await caller(deps).auth.login({ email, password });
  try {
    return await fn(await authenticate(deps, `Bearer ${token}`));
  } finally {
    await caller(deps, token).auth.logout();
  }
}

/**
 * The command. `readPassword` is the CLI's (server/cli.ts). Without `out` the document goes to
 * `stdout` (process.stdout unless given).
 */
export async function exportCommand(
  deps: Deps,
  email: string,
  readPassword: (prompt: string) => Promise<string>,
  opts: { out?: string | undefined; format?: string | undefined; stdout?: Writable; err?: (line: string) => void } = {},
): Promise<void> {
  const err = opts.err ?? ((l: string) => process.stderr.write(l + '\n'));
  // `--format ics`: every to-do as one iCalendar file, serialised as the CalDAV door serves them.
  if (opts.format !== undefined && opts.format !== 'json' && opts.format !== 'ics') throw new Error('--format: must be json or ics');
  const piecesOf = (p: Parameters<typeof exportPieces>[1]) => (opts.format === 'ics' ? calendarIcs(deps, p, null) : exportPieces(deps, p));
  const password = await readPassword('Password: ');
  await withSession(deps, email, password, async (p) => {
    if (!opts.out) {
      await pipeTo(piecesOf(p), opts.stdout ?? process.stdout);
      return;
    }
    const partial = `${opts.out}.partial`;
    const file = createWriteStream(partial, { mode: 0o600 });
    try {
      await pipeTo(piecesOf(p), file);
      await new Promise<void>((resolve, reject) => file.end((e?: Error | null) => (e ? reject(e) : resolve())));
      renameSync(partial, opts.out);
    } catch (e) {
      file.destroy();
      rmSync(partial, { force: true });
      throw e;
    }
    err(`exported to ${opts.out}`);
  });
}
