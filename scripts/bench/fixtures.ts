// The benchmark's data, generated deterministically so Cairn (C, sealed) and the bare
// Express + SQLite server (B, plaintext) hold the same to-dos, tags and filter.
//
// Shape of an account (roughly what a long-lived Things/Todoist account looks like):
//   ~78% completed (logbook), ~15% open "anytime", ~5% someday, ~2% scheduled (whenDate set:
//   some today, some in the past, some ahead); one in three has notes; one in four has tags.
// `SEARCH_TERM` occurs in about 1% of titles; the filter criteria match about 3% of items.

export const TAG_NAMES = ['work', 'home', 'errands', 'reading', 'later', 'health', 'money', 'garden'] as const;
export const SEARCH_TERM = 'aurora';
/** DECISIONS §6 filter syntax; B evaluates the same expression in SQL. */
export const FILTER_CRITERIA = '#work and not #later';
export const FILTER_NAME = 'Work, not later';

export type FixtureTodo = {
  title: string;
  notes: string | null;
  status: 'open' | 'completed';
  whenDate: string | null;
  someday: boolean;
  priority: 'low' | 'medium' | 'high' | null;
  tags: string[];
};

/** mulberry32: a tiny seeded PRNG, so fixture i is the same on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'call', 'email', 'review', 'plan', 'buy', 'fix', 'write', 'read', 'book', 'send', 'pay', 'clean', 'check', 'order', 'draft',
  'report', 'invoice', 'garden', 'kitchen', 'meeting', 'slides', 'budget', 'dentist', 'train', 'tickets', 'paint', 'bike',
  'letter', 'notes', 'backup', 'photos', 'taxes', 'lamp', 'shelf', 'groceries', 'recipe', 'chapter', 'proposal', 'design',
];

export function isoDay(base: string, offsetDays: number): string {
  const d = new Date(`${base}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + offsetDays);
  return d.toISOString().slice(0, 10);
}

/** The i-th to-do of an account (the same i gives the same to-do in B and C). */
export function fixtureTodo(i: number, today: string): FixtureTodo {
  const r = prng(0x5eed + i * 7919);
  const words = 3 + Math.floor(r() * 5);
  const parts: string[] = [];
  for (let w = 0; w < words; w++) parts.push(WORDS[Math.floor(r() * WORDS.length)]!);
  if (i % 97 === 13) parts.splice(1, 0, SEARCH_TERM);
  const title = `${parts.join(' ')} #${i}`;
  const notes = r() < 1 / 3 ? `Notes for item ${i}: ${parts.slice().reverse().join(' ')}. ${'Remember the details. '.repeat(1 + Math.floor(r() * 6))}` : null;
  const roll = r();
  let status: FixtureTodo['status'] = 'open';
  let someday = false;
  let whenDate: string | null = null;
  if (roll < 0.78) status = 'completed';
  else if (roll < 0.93) {
    /* open, anytime */
  } else if (roll < 0.98) someday = true;
  else whenDate = isoDay(today, Math.floor(r() * 11) - 5); // five days back .. five ahead
  const pr = r();
  const priority: FixtureTodo['priority'] = pr < 0.05 ? 'high' : pr < 0.12 ? 'medium' : pr < 0.2 ? 'low' : null;
  const tags: string[] = [];
  if (r() < 0.25) {
    const n = 1 + Math.floor(r() * 2);
    for (let k = 0; k < n; k++) {
      const t = TAG_NAMES[Math.floor(r() * TAG_NAMES.length)]!;
      if (!tags.includes(t)) tags.push(t);
    }
  }
  return { title, notes, status, whenDate, someday, priority, tags };
}

/** Today's date as the server sees it by default (UTC), passed explicitly to both servers. */
export function utcToday(now = Date.now()): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** The to-dos of the door account's project 0: the PROPFIND scenario's 500-item calendar. */
export const DOOR_BIG_COLLECTION = 500;

/**
 * The project (0-based) of the door account's i-th to-do (seed-doors.ts): the first 500 in
 * project 0, the rest round-robin over projects 1..n-1 (10,000 in 50 projects: ~194 each).
 */
export function doorProjectOf(i: number, projects: number): number {
  return i < DOOR_BIG_COLLECTION ? 0 : 1 + ((i - DOOR_BIG_COLLECTION) % (projects - 1));
}
