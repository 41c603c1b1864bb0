// What every import source is read into (issue 33 item 3; docs/import.md): one plan of items in
// Cairn's own shapes, each with its source id and its relations as source ids, plus what could
// not be mapped. The sources (cairn.ts, todoist.ts, things.ts, ics.ts) only read their format;
// routers/imports/apply.ts creates the plan through the models, or reports it (dry run).
import type { TodoStatus } from '../todos/rows.js';

export type Priority = 'low' | 'medium' | 'high';

export type PlanContainer = {
  sid: string;
  kind: 'area' | 'project' | 'subproject';
  parentSid: string | null;
  name: string;
  subtitle?: string | null;
  notes?: string | null;
  symbol?: string | null;
  colorHex?: string | null;
  deadline?: string | null;
  priority?: Priority | null;
  archived?: boolean;
  trashed?: boolean;
};

export type PlanHeading = { sid: string; projectSid: string; name: string };

export type PlanTodo = {
  sid: string;
  parentSid: string | null;
  headingSid: string | null;
  title: string;
  notes?: string | null;
  whenDate?: string | null;
  evening?: boolean;
  someday?: boolean;
  deadline?: string | null;
  priority?: Priority | null;
  tags?: string[];
  checklist?: { title: string; done: boolean }[];
  recurrence?: { rule: string; basis: 'schedule' | 'completion' } | null;
  status?: TodoStatus;
  trashed?: boolean;
};

export type PlanTag = { sid: string; name: string; colorHex?: string | null };
export type PlanFolder = { sid: string; parentSid: string | null; name: string; colorHex?: string | null; symbol?: string | null; trashed?: boolean };
export type PlanNote = { sid: string; parentSid: string | null; folderSid: string | null; title: string | null; body: string; trashed?: boolean };
export type PlanFilter = { sid: string; name: string; criteria: string; symbol?: string | null };
export type PlanFile = { contentType: string; base64: string };
export type PlanInbox = {
  sid: string;
  kind: 'text' | 'url' | 'file' | 'image';
  text?: string | null;
  url?: string | null;
  /** File and image captures: the title given with the file (a url capture's page title is fetched again, not imported). */
  title?: string | null;
  whenDate?: string | null;
  status?: 'inbox' | 'archived' | 'someday' | string;
  /** File and image captures: the file comes with the attachment whose sid is this item's `fileSid`. */
  fileSid?: string | null;
};
export type PlanAttachment = {
  sid: string;
  parentType: 'todo' | 'container' | 'inbox';
  parentSid: string;
  kind: 'url' | 'text' | 'note' | 'file';
  title?: string | null;
  url?: string | null;
  text?: string | null;
  noteSid?: string | null;
  file?: PlanFile | null;
};

/** Everything a source holds, in creation order (parents before children within each list). */
export type ImportPlan = {
  source: ImportSource;
  settings?: { weekStart: string } | undefined;
  tags: PlanTag[];
  containers: PlanContainer[];
  headings: PlanHeading[];
  todos: PlanTodo[];
  noteFolders: PlanFolder[];
  notes: PlanNote[];
  filters: PlanFilter[];
  inbox: PlanInbox[];
  attachments: PlanAttachment[];
  /** What the source holds that Cairn cannot take, one line each (shown in every report). */
  unmapped: string[];
};

export const IMPORT_SOURCES = ['cairn', 'todoist', 'things', 'ics'] as const;
export type ImportSource = (typeof IMPORT_SOURCES)[number];

export function emptyPlan(source: ImportSource): ImportPlan {
  return { source, tags: [], containers: [], headings: [], todos: [], noteFolders: [], notes: [], filters: [], inbox: [], attachments: [], unmapped: [] };
}

/** The kinds a report counts, in plan order. */
export const PLAN_KINDS = ['tags', 'containers', 'headings', 'todos', 'noteFolders', 'notes', 'filters', 'inbox', 'attachments'] as const;
export type PlanKind = (typeof PLAN_KINDS)[number];
