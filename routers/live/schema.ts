// The input of `live.events` (issue 32 item 5; docs/app.md "Live updates").
import { z } from 'zod';

/**
 * `lastEventId`: the cursor of the last message received (tRPC's tracked events: the client adds
 * it when it reconnects, from the `Last-Event-ID` header or its own memory). Absent: start now.
 */
export const LiveEventsInput = z
  .object({ lastEventId: z.string().max(20).nullish() })
  .strict()
  .optional();
export type LiveEventsInput = z.infer<typeof LiveEventsInput>;

