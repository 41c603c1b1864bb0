// The task core (spec §2.1, §2.2, DECISIONS §5): containers, headings, to-dos and the to-do ↔ tag
// join. Plaintext columns are ids, owner, container `kind`, relations, sort keys and server times
// (DECISIONS §3); every name, note, date, status, priority, checklist and recurrence is in `sealed`.
import { sql } from 'drizzle-orm';
import { sqliteTable, text, integer, blob, index, primaryKey, type AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { users } from './accounts.js';
import { tags } from './content.js';

export const CONTAINER_KINDS = ['area', 'project', 'subproject'] as const;
export type ContainerKind = (typeof CONTAINER_KINDS)[number];

/**
 * Areas, projects and subprojects. `parentId` is an area (for a project) or a project (for a
 * subproject). Only the trashed container gets `trashedAt`; its contents leave live views with it
 * (DECISIONS §6). Foreign keys cascade as a safety net; the model deletes contents explicitly so
 * every removed row records its event.
 */
export const containers = sqliteTable(
  'containers',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: CONTAINER_KINDS }).notNull(),
    parentId: text('parent_id').references((): AnySQLiteColumn => containers.id, { onDelete: 'cascade' }),
    sortKey: text('sort_key').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    trashedAt: integer('trashed_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    index('containers_user_parent_order').on(t.userId, t.parentId, t.sortKey, t.id),
    index('containers_user_updated').on(t.userId, t.updatedAt),
  ],
);

/** A named group of to-dos inside a project (spec §2.2). No trash: DELETE removes it. */
export const headings = sqliteTable(
  'headings',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    projectId: text('project_id')
      .notNull()
      .references(() => containers.id, { onDelete: 'cascade' }),
    sortKey: text('sort_key').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    index('headings_user_project_order').on(t.userId, t.projectId, t.sortKey, t.id),
    index('headings_user_updated').on(t.userId, t.updatedAt),
  ],
);

/**
 * To-dos. The item band of a to-do is (parentId, headingId); notes join the same band later, so
 * sort keys are comparable across both tables (routers/band.ts).
 */
export const todos = sqliteTable(
  'todos',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    parentId: text('parent_id').references(() => containers.id, { onDelete: 'cascade' }),
    headingId: text('heading_id').references(() => headings.id, { onDelete: 'set null' }),
    sortKey: text('sort_key').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }).notNull(),
    trashedAt: integer('trashed_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    // The list order of GET /v1/todos is (container, heading's sort key, heading, sort key, id),
    // ids and keys '' when absent. These three columns put that order in one index
    // (todos_user_list_order), so a page reads 51 index entries instead of sorting the account.
    // parent_key and heading_ref are virtual generated columns; heading_key copies the heading's
    // sort key and is kept by triggers (migration 0004), never written by the application.
    parentKey: text('parent_key')
      .notNull()
      .generatedAlwaysAs(sql`coalesce("parent_id", '')`, { mode: 'virtual' }),
    headingRef: text('heading_ref')
      .notNull()
      .generatedAlwaysAs(sql`coalesce("heading_id", '')`, { mode: 'virtual' }),
    headingKey: text('heading_key').notNull().default(''),
  },
  (t) => [
    index('todos_user_band_order').on(t.userId, t.parentId, t.headingId, t.sortKey, t.id),
    index('todos_user_list_order').on(t.userId, t.parentKey, t.headingKey, t.headingRef, t.sortKey, t.id),
    index('todos_user_heading').on(t.userId, t.headingId),
    index('todos_user_updated').on(t.userId, t.updatedAt),
    // Issue 14: the views read every to-do's plaintext placement and stamp (never the sealed
    // blob); this covering index serves that scan without touching the rows' overflow pages.
    index('todos_user_placement').on(t.userId, t.id, t.updatedAt, t.trashedAt, t.parentId, t.headingId, t.headingKey, t.sortKey),
  ],
);

/**
 * Tags on a to-do: a plaintext relation (DECISIONS §3). Deleting a tag cascades here, so the tag
 * leaves every to-do (spec §4.13). `position` keeps the order the client gave. Both secondary
 * indexes lead with the pair a query names (user + to-do, tag + user): with `user_id` alone SQLite
 * chose it for `user_id = ? AND todo_id = ?` and walked every link of the account (0013).
 */
export const todoTags = sqliteTable(
  'todo_tags',
  {
    todoId: text('todo_id')
      .notNull()
      .references(() => todos.id, { onDelete: 'cascade' }),
    tagId: text('tag_id')
      .notNull()
      .references(() => tags.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
  },
  (t) => [primaryKey({ columns: [t.todoId, t.tagId] }), index('todo_tags_tag').on(t.tagId, t.userId), index('todo_tags_user').on(t.userId, t.todoId)],
);
