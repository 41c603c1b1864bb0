// Live events for first-party apps (issue 32 item 5; docs/app.md "Live updates"): the outbox
// (routers/events.ts), which every change of every door (/v1, /trpc, CalDAV, MCP, imports) writes
// in the change's own transaction, read for the streams the web app holds open over SSE.
//
// One hub per database handle: while any stream is open it reads the outbox's newest `seq` every
// LIVE.pollMs (the primary key: one index probe) and, when it moved, which accounts wrote since,
// and wakes only their streams. Each stream then reads its own account's rows after its cursor
// (the `outbox_user` index). Polling the table rather than hooking the writes also sees what
// another process wrote to the same file (the CLI's imports), and a stream never sees a row
// before its transaction committed (better-sqlite3's transactions are synchronous).
//
// A stream carries event types and object ids only, never content, so it needs no data key.
import { tracked, type TrackedEnvelope } from '@trpc/server';
import { AppError } from '../../core/errors.js';
import { prepared } from '../../db/prepared.js';
import type { Db } from '../../db/client.js';
import type { Deps } from '../deps.js';
import { assertCredentialLive, type Principal } from '../auth/credentials.js';

/** One change: the outbox event's type (`todo.updated`) and the id of the object. Never content. */
export type LiveEvent = { type: string; id: string };

/**
 * One message of the stream, sent as a tracked event whose id is the cursor. `events`: what changed
 * since the previous message, oldest first; empty in the first message of a stream (it carries the
 * starting cursor). `more`: more changed than one message holds (or the cursor was unknown): the
 * app refetches everything it shows rather than reading the list. (Spelt out again in liveEvents'
 * signature: the router's declarations then inline it, and `cairn/client` ships no extra file.)
 */
export type LiveMessage = { events: LiveEvent[]; more: boolean };

export const LIVE = {
  /** Streams open at once per account, all its sessions together; the next one is refused (`conflict`). */
  streamsPerUser: 4,
  /** How often the hub reads the outbox's newest `seq` while a stream is open. */
  pollMs: 250,
  /** How often a stream checks that its session still stands (also checked on every wake). */
  credentialCheckMs: 2_000,
  /** Events in one message; past it the message says `more` and the cursor jumps to the newest. */
  batch: 100,
} as const;

type Stream = { userId: string; wake: () => void; stop: () => void };

function maxSeq(db: Db): number {
  const q = prepared(db, 'live.maxSeq', (d) => d.$client.prepare<[], { m: number | null }>('SELECT max(seq) AS m FROM outbox'));
  return q.get()?.m ?? 0;
}

function writersBetween(db: Db, after: number, upTo: number): string[] {
  const q = prepared(db, 'live.writers', (d) =>
    d.$client.prepare<[number, number], { userId: string }>('SELECT DISTINCT user_id AS userId FROM outbox WHERE seq > ? AND seq <= ?'),
  );
  return q.all(after, upTo).map((r) => r.userId);
}

function userMaxSeq(db: Db, userId: string): number {
  const q = prepared(db, 'live.userMaxSeq', (d) =>
    d.$client.prepare<[string], { m: number | null }>('SELECT max(seq) AS m FROM outbox WHERE user_id = ?'),
  );
  return q.get(userId)?.m ?? 0;
}

type Row = { seq: number; type: string; objectId: string };
function rowsAfter(db: Db, userId: string, cursor: number, limit: number): Row[] {
  const q = prepared(db, 'live.rowsAfter', (d) =>
    d.$client.prepare<[string, number, number], Row>(
      'SELECT seq, type, object_id AS objectId FROM outbox WHERE user_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
  );
  return q.all(userId, cursor, limit);
}

class LiveHub {
  private readonly byUser = new Map<string, Set<Stream>>();
  private open = 0;
  private seen = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private closing = false;

  constructor(private readonly deps: Pick<Deps, 'db' | 'log'>) {}

  /** Registers a stream; throws `conflict` past the per-account bound. Returns its removal. */
  join(s: Stream): () => void {
    if (this.closing) throw new AppError('conflict', 'The server is shutting down; live updates resume when it is back.');
    let set = this.byUser.get(s.userId);
    if ((set?.size ?? 0) >= LIVE.streamsPerUser) {
      throw new AppError(
        'conflict',
        `This account already has ${LIVE.streamsPerUser} live streams open (other tabs or devices); close one to open another. Polling with updated_since still works.`,
      );
    }
    if (!set) this.byUser.set(s.userId, (set = new Set()));
    set.add(s);
    if (this.open++ === 0) this.startPolling();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      set.delete(s);
      if (!set.size) this.byUser.delete(s.userId);
      if (--this.open === 0) this.stopPolling();
    };
  }

  /** Open streams of one account (tests, and the bound above). */
  count(userId: string): number {
    return this.byUser.get(userId)?.size ?? 0;
  }

  /** Ends every stream and refuses new ones (server shutdown). Returns how many were open. */
  closeAll(): number {
    this.closing = true;
    const n = this.open;
    for (const set of [...this.byUser.values()]) for (const s of [...set]) s.stop();
    return n;
  }

  private startPolling(): void {
    this.seen = maxSeq(this.deps.db);
    this.timer = setInterval(() => this.tick(), LIVE.pollMs);
    this.timer.unref();
  }

  private stopPolling(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    try {
      const max = maxSeq(this.deps.db);
      if (max <= this.seen) return;
      const writers = writersBetween(this.deps.db, this.seen, max);
      this.seen = max;
      for (const userId of writers) for (const s of this.byUser.get(userId) ?? []) s.wake();
    } catch (err) {
      // A closed database (tests tearing down) or a busy file: the next tick tries again.
      this.deps.log.warn({ err }, 'live: reading the outbox failed');
    }
  }
}

const hubs = new WeakMap<Db, LiveHub>();

export function liveHub(deps: Pick<Deps, 'db' | 'log'>): LiveHub {
  let hub = hubs.get(deps.db);
  if (!hub) hubs.set(deps.db, (hub = new LiveHub(deps)));
  return hub;
}

/** server/main.ts on SIGTERM/SIGINT: every stream ends now, so the server's close does not wait for them. */
export function closeLiveStreams(deps: Pick<Deps, 'db' | 'log'>): number {
  return liveHub(deps).closeAll();
}

/** Where a stream starts: after `lastEventId` when it names a position this outbox has, else now. */
function startCursor(db: Db, userId: string, lastEventId: string | null | undefined): { cursor: number; unknown: boolean } {
  if (lastEventId != null) {
    const n = /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : NaN;
    if (Number.isSafeInteger(n) && n <= maxSeq(db)) return { cursor: n, unknown: false };
    // A cursor from another database (restored from a backup) or not one of ours: start now and
    // tell the app to refetch, since what it missed cannot be listed.
    return { cursor: userMaxSeq(db, userId), unknown: true };
  }
  return { cursor: userMaxSeq(db, userId), unknown: false };
}

/**
 * The stream of one first-party session: a first message with the starting cursor (and what
 * changed since `lastEventId` when resuming), then one message per batch of the account's events.
 * Ends when the client goes (`signal`), at shutdown, or with `unauthorized` once the session is
 * revoked, replaced (password change, key rotation, revoke-all), logged out or expired: checked
 * every LIVE.credentialCheckMs and before every message.
 */
export async function* liveEvents(
  deps: Deps,
  principal: Principal,
  lastEventId: string | null | undefined,
  signal: AbortSignal | undefined,
): AsyncGenerator<TrackedEnvelope<{ events: { type: string; id: string }[]; more: boolean }>, void, unknown> {
  const userId = principal.userId;
  // The stream needs no data key (ids and types only) and may stay open for hours: the key the
  // request unwrapped is zeroed now, not held for the stream's life (docs/security.md "Keys").
  // The session itself is still checked on every wake (assertCredentialLive reads its row).
  principal.dek.fill(0);
  let dirty = false;
  let stopped = false;
  let notify: (() => void) | null = null;
  const poke = () => {
    const n = notify;
    notify = null;
    n?.();
  };
  const stream: Stream = {
    userId,
    wake: () => {
      dirty = true;
      poke();
    },
    stop: () => {
      stopped = true;
      poke();
    },
  };
  // Joined and the cursor read in one synchronous step: no commit can fall between the two.
  const leave = liveHub(deps).join(stream);
  const check = setInterval(poke, LIVE.credentialCheckMs);
  check.unref();
  signal?.addEventListener('abort', poke);
  try {
    const start = startCursor(deps.db, userId, lastEventId);
    let cursor = start.cursor;
    let first = true;
    let more = start.unknown;
    while (!stopped && !signal?.aborted) {
      if (!first && !dirty) {
        await new Promise<void>((resolve) => (notify = resolve));
        if (stopped || signal?.aborted) break;
      }
      assertCredentialLive(deps, principal);
      if (!first && !dirty) continue;
      dirty = false;
      const rows = rowsAfter(deps.db, userId, cursor, LIVE.batch + 1);
      let events: LiveEvent[] = rows.slice(0, LIVE.batch).map((r) => ({ type: r.type, id: r.objectId }));
      if (rows.length > LIVE.batch) {
        more = true;
        events = [];
        cursor = userMaxSeq(deps.db, userId);
      } else if (rows.length) {
        cursor = rows[rows.length - 1]!.seq;
      }
      if (first || events.length || more) yield tracked(String(cursor), { events, more });
      first = false;
      more = false;
    }
  } finally {
    leave();
    clearInterval(check);
    signal?.removeEventListener('abort', poke);
  }
}
