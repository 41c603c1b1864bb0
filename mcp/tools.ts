// The MCP tools (issue 31 item 3, docs/mcp.md "Tools"): a dozen workflow tools, not one per route
// (a listing of every route costs an assistant tens of thousands of tokens). Each calls the same
// models as the routers (never HTTP to ourselves); writes run inside routers/middleware/atomic.ts
// `queueWrite` (one transaction with the credential's liveness check, events and the sealed index),
// and count against the per-credential write bucket REST uses (a batch of n costs n).
//
// Each tool declares the scopes it needs (spec §5.3: checked against the credential's expanded
// set, so a write scope implies its read scope and the umbrellas count); `tools/list` shows a tool
// only when the credential holds them, and a call of a tool it cannot use is answered 403
// `insufficient_scope` naming every scope the call needs (mcp/door.ts). `extraScopes` names what
// one call needs beyond them (a project given by name needs containers:read to be found).
import { z } from 'zod';
import type { Deps } from '../routers/deps.js';
import type { Principal } from '../routers/auth/principal.js';
import type { HttpOut } from '../routers/trpc.js';
import type { Scope } from '../core/scopes.js';
import { invalid } from '../core/errors.js';
import { LIMITS } from '../core/config.js';
import { UUID_UPPER } from '../core/ids.js';
import { isCalendarDate } from '../core/calendar.js';
import { queueWrite } from '../routers/middleware/atomic.js';
import { limiterFor, refuseIfAny, type RateTracker } from '../routers/middleware/rate-limit.js';
import * as todos from '../routers/todos/model.js';
import * as views from '../routers/views/model.js';
import * as containers from '../routers/containers/model.js';
import * as headings from '../routers/headings/model.js';
import * as inbox from '../routers/inbox/model.js';
import * as notes from '../routers/notes/model.js';
import { search as searchModel } from '../routers/search/model.js';
import { filterTodos } from '../routers/filters/model.js';
import type { TodoOut } from '../routers/todos/schema.js';
import type { ContainerOut } from '../routers/containers/schema.js';
import type { HeadingOut } from '../routers/headings/schema.js';
import { cutText, pageUnderCap, prefixPointers, RESULT_CAP_BYTES, type ToolOutput } from './results.js';

/** What a tool call runs with: the request's principal and its buckets. Nothing outlives the request. */
export type ToolEnv = {
  deps: Deps;
  principal: Principal;
  requestId: string;
  http: HttpOut;
  rate: RateTracker;
  /** The credential's bucket subject (routers/middleware/rate-limit.ts). */
  subject: string | undefined;
};

export type ToolAnnotations = { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };

export type ToolDef = {
  name: string;
  title: string;
  description: string;
  scopes: readonly Scope[];
  /** Scopes one call needs beyond `scopes`, from its raw arguments (recognised before it runs). */
  extraScopes?: (args: Record<string, unknown>) => Scope[];
  input: z.ZodObject;
  output: z.ZodObject;
  annotations: ToolAnnotations;
  run: (env: ToolEnv, input: never) => ToolOutput | Promise<ToolOutput>;
};

// ---- Shared pieces ----------------------------------------------------------------------------

const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const ADD: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const Day = z.string().regex(DATE_RE, 'must be a date as YYYY-MM-DD').refine(isCalendarDate, 'is not a calendar date');
const Today = Day.optional().describe(
  "The user's local date (YYYY-MM-DD). Pass it: 'today', 'tomorrow' and the views depend on it, and without it the server's UTC date is used.",
);
const Limit = z.number().int().min(1).max(100).optional().describe('Items per page, 1..100, default 25.');
const Cursor = z.string().max(8192).optional().describe('next_cursor from the previous call, to get the next page.');
const When = z
  .string()
  .refine((s) => ['today', 'evening', 'tomorrow', 'someday', 'anytime'].includes(s) || (DATE_RE.test(s) && isCalendarDate(s)), "must be today, evening, tomorrow, someday, anytime or a date as YYYY-MM-DD")
  .describe("When the user plans to do it: 'today', 'evening' (this evening), 'tomorrow', 'someday', 'anytime' (no date), or a date YYYY-MM-DD.");
const Ref = z.string().min(1).max(LIMITS.container.name).describe('An id, or the exact name (case-insensitive).');

const ChecklistItem = z.object({ id: z.string(), title: z.string(), done: z.boolean() });
/** A to-do as tools show it: what an assistant acts on, without the sort keys and stamps. */
const TodoBrief = z.object({
  id: z.string(),
  title: z.string(),
  status: z.enum(['open', 'completed', 'canceled']),
  when: z.string().nullable().describe('The when-date (YYYY-MM-DD) or null.'),
  evening: z.boolean(),
  someday: z.boolean(),
  deadline: z.string().nullable(),
  priority: z.enum(['low', 'medium', 'high']).nullable(),
  tags: z.array(z.string()),
  notes: z.string().nullable(),
  checklist: z.array(ChecklistItem),
  recurrence: z.object({ rule: z.string(), basis: z.enum(['schedule', 'completion']) }).nullable(),
  projectId: z.string().nullable(),
  headingId: z.string().nullable(),
  completedAt: z.string().nullable(),
  trashed: z.boolean(),
  overdue: z.boolean().optional().describe('Today view: the deadline has passed.'),
  occursOn: z.string().optional().describe('Upcoming view: the day this entry stands for.'),
  projected: z.boolean().optional().describe("Upcoming view: a recurring to-do's later occurrence (not stored)."),
  notesTruncated: z.boolean().optional().describe('The notes were cut to fit the result; get_todo reads them whole.'),
});
type Brief = z.infer<typeof TodoBrief>;

function brief(t: TodoOut & { overdue?: boolean; occursOn?: string; projected?: boolean }): Brief {
  const b: Brief = {
    id: t.id,
    title: t.title,
    status: t.status,
    when: t.whenDate,
    evening: t.evening,
    someday: t.someday,
    deadline: t.deadline,
    priority: t.priority,
    tags: t.tags,
    notes: t.notes,
    checklist: t.checklist,
    recurrence: t.recurrence,
    projectId: t.parentId,
    headingId: t.headingId,
    completedAt: t.completedAt,
    trashed: t.trashedAt !== null,
  };
  if (t.overdue !== undefined) b.overdue = t.overdue;
  if (t.occursOn !== undefined) b.occursOn = t.occursOn;
  if (t.projected !== undefined) b.projected = t.projected;
  return b;
}

/** One to-do too large for the cap alone: its notes are cut. */
function shrinkBrief(b: Brief, budget: number): Brief {
  const other = Buffer.byteLength(JSON.stringify({ ...b, notes: '' }), 'utf8');
  return { ...b, notes: b.notes === null ? null : cutText(b.notes, Math.max(0, budget - other - 64)), notesTruncated: true };
}

function line(b: Brief): string {
  const box = b.status === 'completed' ? '[x]' : b.status === 'canceled' ? '[-]' : '[ ]';
  const bits = [`${box} ${b.title}`, `id ${b.id}`];
  if (b.occursOn) bits.push(`on ${b.occursOn}${b.projected ? ' (repeat)' : ''}`);
  else if (b.someday) bits.push('someday');
  else if (b.when) bits.push(`when ${b.when}${b.evening ? ' evening' : ''}`);
  if (b.deadline) bits.push(`due ${b.deadline}${b.overdue ? ' (overdue)' : ''}`);
  if (b.tags.length) bits.push(b.tags.map((t) => `#${t}`).join(' '));
  return `- ${bits.join(' · ')}`;
}

function todayOf(env: ToolEnv, today: string | undefined): string {
  return today ?? todos.todayOf(env.deps);
}

function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/** Things-style `when` (docs/mcp.md) as the to-do fields it sets. */
function whenFields(when: string, today: string): { whenDate: string | null; evening: boolean; someday: boolean } {
  switch (when) {
    case 'today':
      return { whenDate: today, evening: false, someday: false };
    case 'evening':
      return { whenDate: today, evening: true, someday: false };
    case 'tomorrow':
      return { whenDate: addDays(today, 1), evening: false, someday: false };
    case 'someday':
      return { whenDate: null, evening: false, someday: true };
    case 'anytime':
      return { whenDate: null, evening: false, someday: false };
    default:
      return { whenDate: when, evening: false, someday: false };
  }
}

/**
 * A write: the per-credential write bucket (REST's budget; a batch of n costs n), then the model
 * call in the group-committed transaction, where the credential is checked to still stand.
 */
async function write<T>(env: ToolEnv, cost: number, run: () => T): Promise<T> {
  if (env.subject) {
    const results = limiterFor(env.deps).hit([{ name: 'credentialWrites', subject: env.subject, cost }]);
    env.rate.add(results);
    refuseIfAny(results);
  }
  return queueWrite({ deps: env.deps, principal: env.principal, http: env.http }, run);
}

const isId = (ref: string) => UUID_UPPER.test(ref);
const byName = (a: string, b: string) => a.trim().toLocaleLowerCase() === b.trim().toLocaleLowerCase();

/** Every live container of the account (names need containers:read; bounded by the account size). */
function allContainers(env: ToolEnv): ContainerOut[] {
  const out: ContainerOut[] = [];
  let cursor: string | undefined;
  do {
    const page = containers.listContainers(env.deps, env.principal, { limit: LIMITS.page.maxLimit, ...(cursor ? { cursor } : {}) });
    out.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return out;
}

function allHeadings(env: ToolEnv, projectId?: string): HeadingOut[] {
  const out: HeadingOut[] = [];
  let cursor: string | undefined;
  do {
    const page = headings.listHeadings(env.deps, env.principal, { limit: LIMITS.page.maxLimit, ...(projectId ? { project_id: projectId } : {}), ...(cursor ? { cursor } : {}) });
    out.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return out;
}

/** A project, area or subproject by id (passed through: the model checks it) or by exact name. */
function resolveContainer(env: ToolEnv, ref: string, pointer: string, all?: ContainerOut[]): string {
  if (isId(ref)) return ref;
  const found = (all ?? allContainers(env)).filter((c) => byName(c.name, ref) && c.status === 'active');
  if (found.length === 1) return found[0]!.id;
  if (found.length === 0) throw invalid(pointer, `no project or area is named "${ref}"; find_projects lists them`);
  throw invalid(pointer, `${found.length} projects or areas are named "${ref}"; give the id (${found.map((c) => c.id).join(', ')})`);
}

function resolveHeading(env: ToolEnv, ref: string, projectId: string | null, pointer: string): { id: string; projectId: string } {
  if (isId(ref)) {
    const h = headings.getHeading(env.deps, env.principal, ref);
    return { id: h.id, projectId: h.projectId };
  }
  if (!projectId) throw invalid(pointer, 'a heading given by name needs its project');
  const found = allHeadings(env, projectId).filter((h) => byName(h.name, ref));
  if (found.length === 1) return { id: found[0]!.id, projectId };
  if (found.length === 0) throw invalid(pointer, `the project has no heading named "${ref}"`);
  throw invalid(pointer, `${found.length} headings are named "${ref}"; give the id`);
}

/** containers:read when a project, area or heading is named rather than given by id. */
function namesNeedRead(...refs: unknown[]): Scope[] {
  return refs.some((r) => typeof r === 'string' && !isId(r)) ? ['containers:read'] : [];
}

// ---- find_todos -------------------------------------------------------------------------------

const VIEWS = ['today', 'upcoming', 'anytime', 'someday', 'logbook'] as const;

const FindTodosInput = z
  .object({
    view: z.enum(VIEWS).optional().describe("A list as the app shows it: today (incl. this evening and overdue), upcoming (future dates by day), anytime, someday, logbook (done, newest first). Default today when nothing else is given."),
    project: Ref.optional().describe('To-dos of this project, area or subproject: an id, or its exact name.'),
    heading: Ref.optional().describe('To-dos under this heading: an id, or its exact name (with project).'),
    tag: z.string().min(1).max(LIMITS.tag.name).optional().describe('Only to-dos carrying this tag (case-insensitive).'),
    text: z.string().min(1).max(LIMITS.search.q).optional().describe('Words to find in titles, notes and checklists (every word must match).'),
    filter_id: z.string().min(1).max(LIMITS.idMax).optional().describe("A saved filter's id: its open to-dos."),
    status: z.enum(['open', 'completed', 'canceled', 'any']).optional().describe('With project or heading: which to-dos (default open).'),
    today: Today,
    limit: Limit,
    cursor: Cursor,
  })
  .strict();

const FindTodosOutput = z.object({ todos: z.array(TodoBrief), next_cursor: z.string().nullable().describe('Pass as cursor for more; null when this is all.') });

type FindTodos = z.infer<typeof FindTodosInput>;

function findTodos(env: ToolEnv, a: FindTodos): ToolOutput {
  const { deps, principal: p } = env;
  const today = todayOf(env, a.today);
  const limit = a.limit ?? 25;
  const modes = [a.view, a.project ?? a.heading, a.text, a.filter_id].filter((x) => x !== undefined).length;
  if (modes > 1) throw invalid('', 'give one of view, project/heading, text or filter_id (tag may go with any)');
  const tag = a.tag?.toLocaleLowerCase();
  const keep = (t: TodoOut) => !tag || t.tags.some((x) => x.toLocaleLowerCase() === tag);
  const q = JSON.stringify(['find_todos', a.view, a.project, a.heading, a.tag, a.text, a.filter_id, a.status, today]);
  let load: (cursor: string | undefined, n: number) => { items: Brief[]; next: string | null };
  let modelMax: number = LIMITS.page.maxLimit;
  let label: string;
  const briefs = (list: (TodoOut & { overdue?: boolean; occursOn?: string; projected?: boolean })[]) => list.filter(keep).map(brief);

  if (a.text !== undefined) {
    label = `matching "${a.text}"`;
    load = (cursor, n) => {
      const r = searchModel(deps, p, { q: a.text!, types: 'todo', limit: n, ...(cursor ? { cursor } : {}) });
      return { items: briefs(r.data.map((h) => todos.getTodo(deps, p, h.id))), next: r.next_cursor };
    };
  } else if (a.filter_id !== undefined) {
    label = 'in the filter';
    load = (cursor, n) => {
      const r = filterTodos(deps, p, { id: a.filter_id!, limit: n, today, ...(cursor ? { cursor } : {}) });
      return { items: briefs(r.data), next: r.next_cursor };
    };
  } else if (a.project !== undefined || a.heading !== undefined) {
    let parentId = a.project !== undefined ? resolveContainer(env, a.project, '/project') : null;
    let headingId: string | undefined;
    if (a.heading !== undefined) {
      const h = resolveHeading(env, a.heading, parentId, '/heading');
      headingId = h.id;
      parentId = h.projectId;
    }
    const status = a.status === 'any' ? undefined : (a.status ?? 'open');
    label = `in ${a.heading ? 'the heading' : 'the project'}`;
    load = (cursor, n) => {
      const r = todos.listTodos(deps, p, { limit: n, parent_id: parentId!, ...(headingId ? { heading_id: headingId } : {}), ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) });
      return { items: briefs(r.data), next: r.next_cursor };
    };
  } else if (a.view === undefined && tag) {
    label = `tagged #${a.tag}`;
    load = (cursor, n) => {
      const r = todos.listTodos(deps, p, { limit: n, status: 'open', ...(cursor ? { cursor } : {}) });
      return { items: briefs(r.data), next: r.next_cursor };
    };
  } else {
    const view = a.view ?? 'today';
    label = `in ${view}`;
    if (view === 'today') {
      modelMax = Infinity;
      load = () => {
        const r = views.todayView(deps, p, { today });
        return { items: briefs([...r.todos, ...r.evening]), next: null };
      };
    } else if (view === 'upcoming') {
      modelMax = Infinity;
      load = () => ({ items: briefs(views.upcomingView(deps, p, { today }).days.flatMap((d) => d.todos)), next: null });
    } else if (view === 'logbook') {
      load = (cursor, n) => {
        const r = views.logbookView(deps, p, { today, limit: n, ...(cursor ? { cursor } : {}) });
        return { items: briefs(r.days.flatMap((d) => d.todos)), next: r.next_cursor };
      };
    } else {
      const model = view === 'anytime' ? views.anytimeView : views.somedayView;
      load = (cursor, n) => {
        const r = model(deps, p, { today, limit: n, ...(cursor ? { cursor } : {}) });
        return { items: briefs(r.groups.flatMap((g) => g.todos)), next: r.next_cursor };
      };
    }
  }
  const page = pageUnderCap({ q, cursor: a.cursor, limit, modelMax, load, overhead: limit * 200, shrink: shrinkBrief });
  const head = `${page.items.length} to-do${page.items.length === 1 ? '' : 's'} ${label}${page.next_cursor ? ' (more: pass next_cursor)' : ''}.`;
  return { data: { todos: page.items, next_cursor: page.next_cursor }, summary: [head, ...page.items.map(line)].join('\n') };
}

// ---- get_todo ---------------------------------------------------------------------------------

const FullTodo = TodoBrief.extend({ createdAt: z.string(), updatedAt: z.string() });
const GetTodoInput = z.object({ id: z.string().min(1).max(LIMITS.idMax).describe("The to-do's id.") }).strict();

function getTodo(env: ToolEnv, a: z.infer<typeof GetTodoInput>): ToolOutput {
  const t = todos.getTodo(env.deps, env.principal, a.id);
  const b = { ...brief(t), createdAt: t.createdAt, updatedAt: t.updatedAt };
  const notes = b.notes ? `\n\n${b.notes}` : '';
  const list = b.checklist.length ? '\n' + b.checklist.map((c) => `  ${c.done ? '[x]' : '[ ]'} ${c.title}`).join('\n') : '';
  return { data: b, summary: `${line(b)}${list}${notes}` };
}

// ---- add_todos --------------------------------------------------------------------------------

const NewTodo = z
  .object({
    title: z.string().min(1).max(LIMITS.todo.title).describe('One line.'),
    notes: z.string().max(LIMITS.todo.notes).optional(),
    when: When.optional(),
    deadline: Day.optional().describe('Due date, YYYY-MM-DD.'),
    priority: z.enum(['low', 'medium', 'high']).optional(),
    tags: z.array(z.string().min(1).max(LIMITS.tag.name)).max(LIMITS.todo.tags).optional().describe('Tag names; unknown names create the tag.'),
    checklist: z.array(z.string().min(1).max(LIMITS.todo.checklistTitle)).max(LIMITS.todo.checklist).optional().describe('Checklist item titles, in order.'),
    project: Ref.optional().describe('Project, area or subproject: an id, or its exact name. Omitted: no project.'),
    heading: Ref.optional().describe('A heading of the project: an id, or its exact name.'),
    id: z.string().regex(UUID_UPPER, 'must be an UPPERCASE UUID').optional().describe('Optional id of your choosing (an UPPERCASE UUID): a retry with the same id is refused as a duplicate instead of adding twice.'),
  })
  .strict();
const AddTodosInput = z.object({ todos: z.array(NewTodo).min(1).max(50).describe('1..50 to-dos, added together (all or none).'), today: Today }).strict();
const TodosOutput = z.object({ todos: z.array(TodoBrief) });

const TODO_FIELDS = { '/parentId': '/project', '/headingId': '/heading', '/whenDate': '/when', '/checklist': '/checklist' };

async function addTodos(env: ToolEnv, a: z.infer<typeof AddTodosInput>): Promise<ToolOutput> {
  const today = todayOf(env, a.today);
  let all: ContainerOut[] | undefined;
  // Names are resolved before the write (reads outside the transaction); ids are checked by the model inside it.
  const planned = a.todos.map((t, i) => {
    let parentId: string | null = null;
    let headingId: string | null = null;
    if (t.project !== undefined) parentId = resolveContainer(env, t.project, `/todos/${i}/project`, isId(t.project) ? undefined : (all ??= allContainers(env)));
    if (t.heading !== undefined) {
      const h = resolveHeading(env, t.heading, parentId, `/todos/${i}/heading`);
      headingId = h.id;
      parentId = h.projectId;
    }
    return {
      title: t.title,
      ...(t.notes !== undefined ? { notes: t.notes } : {}),
      ...(t.when !== undefined ? whenFields(t.when, today) : {}),
      ...(t.deadline !== undefined ? { deadline: t.deadline } : {}),
      ...(t.priority !== undefined ? { priority: t.priority } : {}),
      ...(t.tags !== undefined ? { tags: t.tags } : {}),
      ...(t.checklist !== undefined ? { checklist: t.checklist.map((title) => ({ title })) } : {}),
      parentId,
      headingId,
      ...(t.id !== undefined ? { id: t.id } : {}),
    };
  });
  const made = await write(env, planned.length, () =>
    planned.map((input, i) => {
      try {
        return todos.createTodo(env.deps, env.principal, input);
      } catch (e) {
        throw prefixPointers(e, `/todos/${i}`, TODO_FIELDS);
      }
    }),
  );
  const list = made.map(brief);
  return { data: { todos: list }, summary: [`Added ${list.length} to-do${list.length === 1 ? '' : 's'}.`, ...list.map(line)].join('\n') };
}

// ---- update_todos -----------------------------------------------------------------------------

const TodoChange = z
  .object({
    id: z.string().min(1).max(LIMITS.idMax).describe("The to-do's id."),
    title: z.string().min(1).max(LIMITS.todo.title).optional(),
    notes: z.string().max(LIMITS.todo.notes).nullable().optional().describe('New notes; null clears them.'),
    when: When.optional(),
    deadline: Day.nullable().optional().describe('New due date; null clears it.'),
    priority: z.enum(['low', 'medium', 'high']).nullable().optional(),
    tags: z.array(z.string().min(1).max(LIMITS.tag.name)).max(LIMITS.todo.tags).optional().describe('The whole new tag list (replaces the old one).'),
    project: Ref.nullable().optional().describe('Move to this project, area or subproject (id or exact name); null: out of any project.'),
    heading: Ref.nullable().optional().describe('Move under this heading (id, or exact name with project); null: under no heading.'),
    action: z.enum(['complete', 'cancel', 'reopen', 'trash', 'restore']).optional().describe('complete or cancel (a repeating to-do logs a copy and rolls on), reopen, trash (recoverable for 30 days), restore.'),
  })
  .strict();
const UpdateTodosInput = z.object({ todos: z.array(TodoChange).min(1).max(50).describe('1..50 changes, applied together (all or none), in order.'), today: Today }).strict();

async function updateTodos(env: ToolEnv, a: z.infer<typeof UpdateTodosInput>): Promise<ToolOutput> {
  const { deps, principal: p } = env;
  const today = todayOf(env, a.today);
  let all: ContainerOut[] | undefined;
  const planned = a.todos.map((c, i) => {
    let move: { parentId: string | null; headingId: string | null } | undefined;
    if (c.project !== undefined || c.heading !== undefined) {
      let parentId = c.project ? resolveContainer(env, c.project, `/todos/${i}/project`, isId(c.project) ? undefined : (all ??= allContainers(env))) : null;
      if (c.project === undefined) parentId = todos.getTodo(deps, p, c.id).parentId;
      let headingId: string | null = null;
      if (c.heading) {
        const h = resolveHeading(env, c.heading, parentId, `/todos/${i}/heading`);
        headingId = h.id;
        parentId = h.projectId;
      }
      move = { parentId, headingId };
    }
    const fields = {
      ...(c.title !== undefined ? { title: c.title } : {}),
      ...(c.notes !== undefined ? { notes: c.notes } : {}),
      ...(c.when !== undefined ? whenFields(c.when, today) : {}),
      ...(c.deadline !== undefined ? { deadline: c.deadline } : {}),
      ...(c.priority !== undefined ? { priority: c.priority } : {}),
      ...(c.tags !== undefined ? { tags: c.tags } : {}),
    };
    return { id: c.id, fields, move, action: c.action };
  });
  const done = await write(env, planned.length, () =>
    planned.map((c, i) => {
      try {
        let out: TodoOut & { loggedCopyId?: string | null } = todos.getTodo(deps, p, c.id);
        if (Object.keys(c.fields).length) out = todos.updateTodo(deps, p, { id: c.id, ...c.fields });
        if (c.move) out = todos.moveTodo(deps, p, { id: c.id, parentId: c.move.parentId, headingId: c.move.headingId });
        switch (c.action) {
          case 'complete':
          case 'cancel':
            out = todos.finishTodo(deps, p, c.id, c.action === 'complete' ? 'completed' : 'canceled', today);
            break;
          case 'reopen':
            out = todos.reopenTodo(deps, p, c.id);
            break;
          case 'trash':
          case 'restore':
            out = todos.trashTodo(deps, p, c.id, c.action === 'trash');
            break;
        }
        return { ...brief(out), ...(out.loggedCopyId ? { loggedCopyId: out.loggedCopyId } : {}) };
      } catch (e) {
        throw prefixPointers(e, `/todos/${i}`, TODO_FIELDS);
      }
    }),
  );
  return { data: { todos: done }, summary: [`Changed ${done.length} to-do${done.length === 1 ? '' : 's'}.`, ...done.map(line)].join('\n') };
}
const UpdatedOutput = z.object({ todos: z.array(TodoBrief.extend({ loggedCopyId: z.string().optional().describe('A repeating to-do: the id of the logged copy; the to-do itself rolled on.') })) });

// ---- find_projects / overview ------------------------------------------------------------------

const ProjectsInput = z
  .object({
    kind: z.enum(['area', 'project', 'subproject']).optional(),
    name: z.string().min(1).max(LIMITS.container.name).optional().describe('Only those whose name contains this (case-insensitive).'),
    include_archived: z.boolean().optional().describe('Also archived ones (default false).'),
    today: Today,
    limit: Limit,
    cursor: Cursor,
  })
  .strict();
const HeadingBrief = z.object({ id: z.string(), name: z.string(), openCount: z.number() });
const ContainerBrief = z.object({
  id: z.string(),
  kind: z.enum(['area', 'project', 'subproject']),
  name: z.string(),
  parentId: z.string().nullable(),
  status: z.enum(['active', 'archived']),
  deadline: z.string().nullable(),
  openCount: z.number().describe('Open to-dos directly in it.'),
  headings: z.array(HeadingBrief),
});
const ProjectsOutput = z.object({ containers: z.array(ContainerBrief), next_cursor: z.string().nullable() });
type CBrief = z.infer<typeof ContainerBrief>;

function containerBriefs(env: ToolEnv, today: string, includeArchived: boolean): CBrief[] {
  const counts = new Map(views.overviewView(env.deps, env.principal, { today }).containers.map((c) => [c.id, c.openCount]));
  const hs = new Map<string, HeadingOut[]>();
  for (const h of allHeadings(env)) hs.set(h.projectId, [...(hs.get(h.projectId) ?? []), h]);
  return allContainers(env)
    .filter((c) => includeArchived || c.status === 'active')
    .map((c) => ({
      id: c.id,
      kind: c.kind,
      name: c.name,
      parentId: c.parentId,
      status: c.status,
      deadline: c.deadline,
      openCount: counts.get(c.id) ?? 0,
      headings: (hs.get(c.id) ?? []).map((h) => ({ id: h.id, name: h.name, openCount: h.openCount })),
    }));
}

function findProjects(env: ToolEnv, a: z.infer<typeof ProjectsInput>): ToolOutput {
  const today = todayOf(env, a.today);
  const needle = a.name?.toLocaleLowerCase();
  const q = JSON.stringify(['find_projects', a.kind, a.name, a.include_archived ?? false]);
  const page = pageUnderCap({
    q,
    cursor: a.cursor,
    limit: a.limit ?? 25,
    modelMax: Infinity,
    overhead: (a.limit ?? 25) * 120,
    load: () => ({
      items: containerBriefs(env, today, a.include_archived ?? false).filter((c) => (!a.kind || c.kind === a.kind) && (!needle || c.name.toLocaleLowerCase().includes(needle))),
      next: null,
    }),
  });
  const lines = page.items.map((c) => `- ${c.kind} ${c.name} · id ${c.id} · ${c.openCount} open${c.headings.length ? ` · headings: ${c.headings.map((h) => h.name).join(', ')}` : ''}`);
  return { data: { containers: page.items, next_cursor: page.next_cursor }, summary: [`${page.items.length} container${page.items.length === 1 ? '' : 's'}${page.next_cursor ? ' (more: pass next_cursor)' : ''}.`, ...lines].join('\n') };
}

const OverviewInput = z.object({ today: Today }).strict();
const OverviewOutput = z.object({
  date: z.string(),
  counts: z.object({ today: z.number(), upcoming: z.number(), anytime: z.number(), someday: z.number(), logbook: z.number() }),
  inbox: z.number().nullable().describe('Open inbox captures (null without inbox:read).'),
});

function overview(env: ToolEnv, a: z.infer<typeof OverviewInput>): ToolOutput {
  const o = views.overviewView(env.deps, env.principal, { today: todayOf(env, a.today) });
  let inboxOpen: number | null = null;
  if (env.principal.scopes.has('inbox:read')) {
    inboxOpen = 0;
    let cursor: string | undefined;
    do {
      const page = inbox.listInbox(env.deps, env.principal, { status: 'open', limit: LIMITS.page.maxLimit, ...(cursor ? { cursor } : {}) });
      inboxOpen += page.data.length;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }
  const c = o.counts;
  const summary = `${o.date}: ${c.today} today, ${c.upcoming} upcoming, ${c.anytime} anytime, ${c.someday} someday, ${c.logbook} in the logbook${inboxOpen === null ? '' : `, ${inboxOpen} in the inbox`}.`;
  return { data: { date: o.date, counts: c, inbox: inboxOpen }, summary };
}

// ---- search -----------------------------------------------------------------------------------

const SEARCH_SCOPE = { todo: 'todos:read', note: 'notes:read', container: 'containers:read', heading: 'containers:read', inbox: 'inbox:read' } as const;
const SearchInput = z
  .object({
    q: z.string().min(1).max(LIMITS.search.q).describe('Words to find; every word must match, case- and accent-insensitively.'),
    types: z.array(z.enum(['todo', 'note', 'container', 'heading', 'inbox'])).min(1).optional().describe('Kinds to search; default every kind this connection may read.'),
    include_trashed: z.boolean().optional(),
    limit: Limit,
    cursor: Cursor,
  })
  .strict();
const SearchOutput = z.object({
  hits: z.array(z.object({ type: z.enum(['todo', 'note', 'container', 'heading', 'inbox']), id: z.string(), title: z.string(), snippet: z.string() })),
  next_cursor: z.string().nullable(),
});

function search(env: ToolEnv, a: z.infer<typeof SearchInput>): ToolOutput {
  const types = a.types?.join(',');
  const q = JSON.stringify(['search', a.q, types, a.include_trashed ?? false]);
  const page = pageUnderCap({
    q,
    cursor: a.cursor,
    limit: a.limit ?? 25,
    modelMax: LIMITS.page.maxLimit,
    overhead: (a.limit ?? 25) * 120,
    load: (cursor, n) => {
      const r = searchModel(env.deps, env.principal, { q: a.q, limit: n, ...(types ? { types } : {}), ...(a.include_trashed ? { include_trashed: true } : {}), ...(cursor ? { cursor } : {}) });
      return { items: r.data, next: r.next_cursor };
    },
  });
  const lines = page.items.map((h) => `- ${h.type} ${h.title} · id ${h.id}${h.snippet ? ` · ${h.snippet}` : ''}`);
  return { data: { hits: page.items, next_cursor: page.next_cursor }, summary: [`${page.items.length} hit${page.items.length === 1 ? '' : 's'} for "${a.q}"${page.next_cursor ? ' (more: pass next_cursor)' : ''}.`, ...lines].join('\n') };
}

// ---- add_project ------------------------------------------------------------------------------

const AddProjectInput = z
  .object({
    name: z.string().min(1).max(LIMITS.container.name),
    kind: z.enum(['project', 'area']).optional().describe('Default project.'),
    area: Ref.optional().describe('For a project: the area it belongs to (id or exact name).'),
    notes: z.string().max(LIMITS.container.notes).optional(),
    deadline: Day.optional(),
    headings: z.array(z.string().min(1).max(LIMITS.headingName)).max(50).optional().describe('Headings to create in the project, in order.'),
  })
  .strict();
const AddProjectOutput = z.object({ container: ContainerBrief });

async function addProject(env: ToolEnv, a: z.infer<typeof AddProjectInput>): Promise<ToolOutput> {
  const kind = a.kind ?? 'project';
  if (kind === 'area' && (a.area !== undefined || a.headings?.length)) throw invalid(kind === 'area' && a.area !== undefined ? '/area' : '/headings', 'an area has no area or headings');
  const parentId = a.area !== undefined ? resolveContainer(env, a.area, '/area') : null;
  const made = await write(env, 1 + (a.headings?.length ?? 0), () => {
    try {
      const c = containers.createContainer(env.deps, env.principal, { kind, name: a.name, parentId, ...(a.notes !== undefined ? { notes: a.notes } : {}), ...(a.deadline !== undefined ? { deadline: a.deadline } : {}) });
      const hs = (a.headings ?? []).map((name) => headings.createHeading(env.deps, env.principal, { projectId: c.id, name }));
      return { c, hs };
    } catch (e) {
      throw prefixPointers(e, '', { '/parentId': '/area' });
    }
  });
  const b: CBrief = { id: made.c.id, kind: made.c.kind, name: made.c.name, parentId: made.c.parentId, status: made.c.status, deadline: made.c.deadline, openCount: 0, headings: made.hs.map((h) => ({ id: h.id, name: h.name, openCount: 0 })) };
  return { data: { container: b }, summary: `Added ${b.kind} ${b.name} (id ${b.id})${b.headings.length ? ` with headings ${b.headings.map((h) => h.name).join(', ')}` : ''}.` };
}

// ---- inbox ------------------------------------------------------------------------------------

const InboxBrief = z.object({
  id: z.string(),
  kind: z.enum(['text', 'url', 'file', 'image']),
  text: z.string().nullable(),
  url: z.string().nullable(),
  title: z.string().nullable(),
  when: z.string().nullable(),
  status: z.enum(['open', 'archived', 'someday', 'moved']),
  createdAt: z.string(),
});
type IBrief = z.infer<typeof InboxBrief>;
const ibrief = (i: { id: string; kind: IBrief['kind']; text: string | null; url: string | null; title: string | null; whenDate: string | null; status: IBrief['status']; createdAt: string }): IBrief => ({
  id: i.id,
  kind: i.kind,
  text: i.text,
  url: i.url,
  title: i.title,
  when: i.whenDate,
  status: i.status,
  createdAt: i.createdAt,
});
const iline = (i: IBrief) => `- ${i.kind} ${i.title ?? i.text ?? i.url ?? '(file)'}${i.url && (i.title ?? i.text) ? ` <${i.url}>` : ''} · id ${i.id} · ${i.status}`;

const CaptureInput = z
  .object({
    text: z.string().min(1).max(LIMITS.inbox.text).optional().describe('What to capture (a thought, a task to sort later).'),
    url: z.string().min(1).max(LIMITS.inbox.url).optional().describe('A web page (http or https) to capture; its title is fetched afterwards.'),
    when: Day.optional().describe('A date to look at it again, YYYY-MM-DD.'),
  })
  .strict();
const CaptureOutput = z.object({ item: InboxBrief });

async function capture(env: ToolEnv, a: z.infer<typeof CaptureInput>): Promise<ToolOutput> {
  if (a.text === undefined && a.url === undefined) throw invalid('/text', 'give text, url or both');
  const kind = a.url !== undefined ? 'url' : 'text';
  const item = await write(env, 1, () => {
    try {
      const it = inbox.captureInbox(env.deps, env.principal, { kind, ...(a.text !== undefined ? { text: a.text } : {}), ...(a.url !== undefined ? { url: a.url } : {}), ...(a.when !== undefined ? { whenDate: a.when } : {}) });
      // As POST /v1/inbox: the title is fetched once the answer has gone out (mcp/door.ts runs it).
      if (it.url !== null) inbox.fetchTitleAfterAnswer(env.deps, env.principal, env, it.id, it.url);
      return it;
    } catch (e) {
      throw prefixPointers(e, '', { '/whenDate': '/when' });
    }
  });
  const b = ibrief(item);
  return { data: { item: b }, summary: `Captured in the inbox: ${iline(b).slice(2)}.` };
}

const FindInboxInput = z
  .object({ status: z.enum(['open', 'archived', 'someday', 'moved']).optional().describe('Default open.'), limit: Limit, cursor: Cursor })
  .strict();
const FindInboxOutput = z.object({ items: z.array(InboxBrief), next_cursor: z.string().nullable() });

function findInbox(env: ToolEnv, a: z.infer<typeof FindInboxInput>): ToolOutput {
  const status = a.status ?? 'open';
  const page = pageUnderCap({
    q: JSON.stringify(['find_inbox', status]),
    cursor: a.cursor,
    limit: a.limit ?? 25,
    modelMax: LIMITS.page.maxLimit,
    load: (cursor, n) => {
      const r = inbox.listInbox(env.deps, env.principal, { status, limit: n, ...(cursor ? { cursor } : {}) });
      return { items: r.data.map(ibrief), next: r.next_cursor };
    },
  });
  return { data: { items: page.items, next_cursor: page.next_cursor }, summary: [`${page.items.length} ${status} inbox item${page.items.length === 1 ? '' : 's'}${page.next_cursor ? ' (more: pass next_cursor)' : ''}.`, ...page.items.map(iline)].join('\n') };
}

const ProcessInboxInput = z
  .object({
    id: z.string().min(1).max(LIMITS.idMax).describe("The inbox item's id."),
    action: z.enum(['to_todo', 'archive', 'someday']).describe('to_todo: make it a to-do (optionally in a project); archive; someday.'),
    project: Ref.optional().describe('With to_todo: the project (id or exact name).'),
  })
  .strict();
const ProcessInboxOutput = z.object({ item: InboxBrief, todo: TodoBrief.nullable() });

async function processInbox(env: ToolEnv, a: z.infer<typeof ProcessInboxInput>): Promise<ToolOutput> {
  if (a.project !== undefined && a.action !== 'to_todo') throw invalid('/project', 'project goes with action to_todo');
  const parentId = a.project !== undefined ? resolveContainer(env, a.project, '/project') : null;
  const out = await write(env, 1, () => {
    try {
      if (a.action === 'to_todo') return inbox.moveInbox(env.deps, env.principal, { id: a.id, parentId });
      return { item: inbox.setInboxStatus(env.deps, env.principal, a.id, a.action === 'archive' ? 'archived' : 'someday'), todo: null };
    } catch (e) {
      throw prefixPointers(e, '', { '/parentId': '/project' });
    }
  });
  const item = ibrief(out.item);
  const todo = out.todo ? brief(out.todo) : null;
  return { data: { item, todo }, summary: todo ? `Made a to-do of it:\n${line(todo)}` : `Inbox item ${item.id} is now ${item.status}.` };
}

// ---- notes ------------------------------------------------------------------------------------

const NoteBrief = z.object({ id: z.string(), title: z.string().nullable(), body: z.string(), projectId: z.string().nullable(), folderId: z.string().nullable(), updatedAt: z.string(), bodyTruncated: z.boolean().optional() });
type NBrief = z.infer<typeof NoteBrief>;
const nbrief = (n: { id: string; title: string | null; body: string; parentId: string | null; folderId: string | null; updatedAt: string }): NBrief => ({ id: n.id, title: n.title, body: n.body, projectId: n.parentId, folderId: n.folderId, updatedAt: n.updatedAt });
const nline = (n: NBrief) => `- ${n.title ?? cutText(n.body.split('\n')[0] ?? '', 80)} · id ${n.id}`;
const PREVIEW = 500;

const FindNotesInput = z
  .object({
    project: Ref.optional().describe('Notes of this project (id or exact name).'),
    text: z.string().min(1).max(LIMITS.search.q).optional().describe('Words to find in titles and bodies.'),
    limit: Limit,
    cursor: Cursor,
  })
  .strict();
const FindNotesOutput = z.object({ notes: z.array(NoteBrief.describe('body: its first 500 characters (get_note reads it whole).')), next_cursor: z.string().nullable() });

function findNotes(env: ToolEnv, a: z.infer<typeof FindNotesInput>): ToolOutput {
  if (a.project !== undefined && a.text !== undefined) throw invalid('', 'give project or text, not both');
  const parentId = a.project !== undefined ? resolveContainer(env, a.project, '/project') : undefined;
  const preview = (n: NBrief): NBrief => (n.body.length > PREVIEW ? { ...n, body: n.body.slice(0, PREVIEW), bodyTruncated: true } : n);
  const page = pageUnderCap({
    q: JSON.stringify(['find_notes', parentId, a.text]),
    cursor: a.cursor,
    limit: a.limit ?? 25,
    modelMax: LIMITS.page.maxLimit,
    load: (cursor, n) => {
      if (a.text !== undefined) {
        const r = searchModel(env.deps, env.principal, { q: a.text, types: 'note', limit: n, ...(cursor ? { cursor } : {}) });
        return { items: r.data.map((h) => preview(nbrief(notes.getNote(env.deps, env.principal, h.id)))), next: r.next_cursor };
      }
      const r = notes.listNotes(env.deps, env.principal, { limit: n, ...(parentId ? { parent_id: parentId } : {}), ...(cursor ? { cursor } : {}) });
      return { items: r.data.map((x) => preview(nbrief(x))), next: r.next_cursor };
    },
  });
  return { data: { notes: page.items, next_cursor: page.next_cursor }, summary: [`${page.items.length} note${page.items.length === 1 ? '' : 's'}${page.next_cursor ? ' (more: pass next_cursor)' : ''}.`, ...page.items.map(nline)].join('\n') };
}

const GetNoteInput = z
  .object({
    id: z.string().min(1).max(LIMITS.idMax).describe("The note's id."),
    offset: z.number().int().min(0).optional().describe('Characters of the body to skip: the body_next_offset of the previous call, for a body larger than one result.'),
  })
  .strict();
const GetNoteOutput = NoteBrief.extend({ body_next_offset: z.number().nullable().describe('Call again with this offset for the rest of the body; null when it is all here.') });

function getNote(env: ToolEnv, a: z.infer<typeof GetNoteInput>): ToolOutput {
  const n = nbrief(notes.getNote(env.deps, env.principal, a.id));
  const from = a.offset ?? 0;
  const rest = n.body.slice(from);
  // The body goes twice (structured and text): each half of the cap, less the envelope.
  const part = cutText(rest, Math.floor((RESULT_CAP_BYTES - 16 * 1024) / 2));
  const next = part.length < rest.length ? from + part.length : null;
  const out = { ...n, body: part, body_next_offset: next, ...(next !== null || from > 0 ? { bodyTruncated: true } : {}) };
  return { data: out, summary: `${n.title ?? '(untitled note)'} · id ${n.id}\n\n${part}${next !== null ? `\n\n[continues: offset ${next}]` : ''}` };
}

const AddNoteInput = z
  .object({
    body: z.string().min(1).max(LIMITS.note.body).describe('The text (Markdown is kept as written).'),
    title: z.string().max(LIMITS.note.title).optional(),
    project: Ref.optional().describe('A project to put it in (id or exact name); omitted: a standalone note.'),
  })
  .strict();
const AddNoteOutput = z.object({ note: NoteBrief });

async function addNote(env: ToolEnv, a: z.infer<typeof AddNoteInput>): Promise<ToolOutput> {
  const parentId = a.project !== undefined ? resolveContainer(env, a.project, '/project') : null;
  const n = await write(env, 1, () => {
    try {
      return notes.createNote(env.deps, env.principal, { body: a.body, parentId, ...(a.title !== undefined ? { title: a.title } : {}) });
    } catch (e) {
      throw prefixPointers(e, '', { '/parentId': '/project' });
    }
  });
  const b = nbrief(n);
  const shown = b.body.length > PREVIEW ? { ...b, body: b.body.slice(0, PREVIEW), bodyTruncated: true } : b;
  return { data: { note: shown }, summary: `Added note ${nline(b).slice(2)}.` };
}

// ---- The table (fixed order: tools/list answers in it) ------------------------------------------

const tool = <I extends z.ZodObject>(d: Omit<ToolDef, 'input' | 'run'> & { input: I; run: (env: ToolEnv, input: z.infer<I>) => ToolOutput | Promise<ToolOutput> }): ToolDef => d as unknown as ToolDef;

export const TOOLS: readonly ToolDef[] = [
  tool({
    name: 'overview',
    title: 'Overview',
    description: "How many to-dos are in Today, Upcoming, Anytime, Someday and the Logbook, and open inbox captures. Pass `today` (the user's local date).",
    scopes: ['todos:read', 'containers:read'],
    input: OverviewInput,
    output: OverviewOutput,
    annotations: READ,
    run: overview,
  }),
  tool({
    name: 'find_todos',
    title: 'Find to-dos',
    description:
      "List to-dos: a view (today, upcoming, anytime, someday, logbook), a project's or heading's to-dos, those matching words, or a saved filter's; `tag` narrows any of them. Pass `today` (the user's local date) for views. Paged: follow next_cursor.",
    scopes: ['todos:read', 'containers:read'],
    extraScopes: (a) => (a.filter_id !== undefined ? ['filters:read'] : []),
    input: FindTodosInput,
    output: FindTodosOutput,
    annotations: READ,
    run: findTodos,
  }),
  tool({
    name: 'get_todo',
    title: 'Read a to-do',
    description: 'One to-do with its notes and checklist, by id.',
    scopes: ['todos:read'],
    input: GetTodoInput,
    output: FullTodo,
    annotations: READ,
    run: getTodo,
  }),
  tool({
    name: 'add_todos',
    title: 'Add to-dos',
    description:
      "Add one or more to-dos. `when`: today, evening, tomorrow, someday, anytime or a date; pass `today` (the user's local date) so today/tomorrow mean the user's day. Project and heading by id or exact name.",
    scopes: ['todos:write'],
    extraScopes: (a) => (Array.isArray(a.todos) ? namesNeedRead(...a.todos.flatMap((t: Record<string, unknown>) => [t?.project, t?.heading])) : []),
    input: AddTodosInput,
    output: TodosOutput,
    annotations: ADD,
    run: addTodos,
  }),
  tool({
    name: 'update_todos',
    title: 'Change to-dos',
    description:
      "Change one or more to-dos: title, notes, when, deadline, priority, tags, move (project/heading), and complete, cancel, reopen, trash or restore. Pass `today` (the user's local date) for when and completing repeating to-dos.",
    scopes: ['todos:write'],
    extraScopes: (a) => (Array.isArray(a.todos) ? namesNeedRead(...a.todos.flatMap((t: Record<string, unknown>) => [t?.project, t?.heading])) : []),
    input: UpdateTodosInput,
    output: UpdatedOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    run: updateTodos,
  }),
  tool({
    name: 'find_projects',
    title: 'Find projects and areas',
    description: 'Areas, projects and subprojects with their open to-do counts and headings (ids for the other tools).',
    scopes: ['containers:read', 'todos:read'],
    input: ProjectsInput,
    output: ProjectsOutput,
    annotations: READ,
    run: findProjects,
  }),
  tool({
    name: 'add_project',
    title: 'Add a project or area',
    description: 'Create a project (optionally in an area, with headings) or an area.',
    scopes: ['containers:write'],
    extraScopes: (a) => namesNeedRead(a.area),
    input: AddProjectInput,
    output: AddProjectOutput,
    annotations: ADD,
    run: addProject,
  }),
  tool({
    name: 'search',
    title: 'Search',
    description: 'Find to-dos, notes, projects, headings and inbox captures by words (case- and accent-insensitive).',
    scopes: [],
    extraScopes: (a) => (Array.isArray(a.types) ? [...new Set(a.types.map((t) => SEARCH_SCOPE[t as keyof typeof SEARCH_SCOPE]).filter(Boolean))] : []),
    input: SearchInput,
    output: SearchOutput,
    annotations: READ,
    run: search,
  }),
  tool({
    name: 'capture',
    title: 'Capture to the inbox',
    description: 'Put a thought or a link in the inbox, to sort later.',
    scopes: ['inbox:write'],
    input: CaptureInput,
    output: CaptureOutput,
    annotations: { ...ADD, openWorldHint: true },
    run: capture,
  }),
  tool({
    name: 'find_inbox',
    title: 'List the inbox',
    description: 'Inbox captures (open by default), newest last. Paged: follow next_cursor.',
    scopes: ['inbox:read'],
    input: FindInboxInput,
    output: FindInboxOutput,
    annotations: READ,
    run: findInbox,
  }),
  tool({
    name: 'process_inbox',
    title: 'Sort an inbox capture',
    description: 'Make an inbox capture a to-do (optionally in a project), or archive it, or put it in someday.',
    scopes: ['inbox:write', 'todos:write'],
    extraScopes: (a) => namesNeedRead(a.project),
    input: ProcessInboxInput,
    output: ProcessInboxOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: processInbox,
  }),
  tool({
    name: 'find_notes',
    title: 'Find notes',
    description: "Notes: all, a project's, or those matching words. Bodies are previews; get_note reads one whole.",
    scopes: ['notes:read'],
    extraScopes: (a) => namesNeedRead(a.project),
    input: FindNotesInput,
    output: FindNotesOutput,
    annotations: READ,
    run: findNotes,
  }),
  tool({
    name: 'get_note',
    title: 'Read a note',
    description: 'One note, whole (a very long body comes in parts: follow body_next_offset).',
    scopes: ['notes:read'],
    input: GetNoteInput,
    output: GetNoteOutput,
    annotations: READ,
    run: getNote,
  }),
  tool({
    name: 'add_note',
    title: 'Add a note',
    description: 'Write a note, standalone or in a project.',
    scopes: ['notes:write'],
    extraScopes: (a) => namesNeedRead(a.project),
    input: AddNoteInput,
    output: AddNoteOutput,
    annotations: ADD,
    run: addNote,
  }),
];

export const TOOLS_BY_NAME: ReadonlyMap<string, ToolDef> = new Map(TOOLS.map((t) => [t.name, t]));

/** search has no fixed scope: it is usable with any one of its kinds' read scopes (routers/search/model.ts). */
export function toolUsable(t: ToolDef, scopes: ReadonlySet<Scope>): boolean {
  if (t.name === 'search') return Object.values(SEARCH_SCOPE).some((s) => scopes.has(s));
  return t.scopes.every((s) => scopes.has(s));
}

/** Every scope one call needs (for the 403 challenge), in a fixed order. */
export function scopesForCall(t: ToolDef, args: Record<string, unknown>): Scope[] {
  const base: Scope[] = t.name === 'search' && !Array.isArray(args.types) ? [] : [...t.scopes];
  return [...new Set([...base, ...(t.extraScopes?.(args) ?? [])])];
}

/** Every scope some tool uses: the 401 challenge and the resource metadata name these. */
export const MCP_SCOPES: readonly Scope[] = ['todos:read', 'todos:write', 'containers:read', 'containers:write', 'notes:read', 'notes:write', 'inbox:read', 'inbox:write', 'filters:read'];
