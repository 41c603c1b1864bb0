// Messages between run.ts and the processes it starts (servers A and B, the Cairn seeder and
// the in-process microbenchmark). Secrets (tokens) travel only over these IPC channels; they
// are never printed or written to the results.

/** An account to create: `todos` to-dos from the fixtures and at least `tags` tags. */
export type AccountSpec = { name: string; todos: number; tags: number };

/** What a server or the seeder knows of an account after seeding. */
export type SeededAccount = {
  name: string;
  /** Up to 500 to-do ids (empty when to-dos could not be seeded). */
  todoIds: string[];
  tagIds: string[];
  filterId: string | null;
  /** Cairn only: a personal access token of the account (never printed). */
  token?: string;
  /** Cairn only: a first-party session of the account, as a first-party app presents it (never printed). */
  session?: string;
};

export type SeedResult = {
  type: 'seeded';
  accounts: SeededAccount[];
  /** Which Cairn resources the seeder could use (a missing one makes its scenarios "not available yet"). */
  available: { todos: boolean; tags: boolean; filters: boolean };
  /** Fields the to-do create refused, and how they were applied instead (or dropped). */
  notes: string[];
  todosSeeded: number;
  seconds: number;
};

export type MicroRow = { name: string; usPerOp: number; note?: string };
export type MicroResult = { type: 'micro'; resource: string; accountSize: number; rows: MicroRow[]; split: MicroRow[]; layers?: MicroRow[] };

/** What seed-doors.ts made: the door scenarios' account (secrets only over IPC, never printed). */
export type DoorSeed = {
  type: 'seeded-doors';
  userId: string;
  email: string;
  /** An app password (`audience: "dav"`). */
  davPassword: string;
  /** A personal token with `audience: "mcp"` (todos:read containers:read). */
  mcpToken: string;
  /** A `rest` personal token with the same scopes, for the MCP tool's REST twin. */
  restToken: string;
  projectIds: string[];
  /** The to-do ids of projects 0, 1 and 2. */
  members: string[][];
  todos: number;
  seconds: number;
};
