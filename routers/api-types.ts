// The types the router's emitted declarations name (issue 13 item 5): what a `cairn/client`
// user's compiler reads. No import here may reach server code, so a client type-checks against
// @trpc/server and superjson alone, not better-sqlite3, express, drizzle or pino.
//
// The server's context and meta are filled in by module augmentation in routers/trpc.ts, which a
// client program never loads: there they are the full types; for a client they stay empty, which
// is all a client needs (the procedures' inputs and outputs are spelt out inline).

/* eslint-disable @typescript-eslint/no-empty-object-type */
/** The procedures' context: augmented with the server's context in routers/trpc.ts. */
export interface RouterContext {}
/** The procedures' meta: augmented with routers/trpc.ts `Meta` (scopes, OpenAPI, …). */
export interface RouterMeta {}

/** One field error of a problem (spec §7): a JSON pointer into the input and a message. */
export type ApiFieldError = { pointer: string; message: string };

/** The RFC 9457 problem every error carries; over /trpc under `error.data.problem`. */
export type ApiProblem = {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  request_id?: string;
  errors?: ApiFieldError[];
};
