// Facts about this installation, one row each. `instance_id`: a random id generated on first start
// and kept with the data; first-party sessions are bound to it (DECISIONS §2), not to PUBLIC_URL
// or the port, so changing either (or minting a session with the CLI) logs nobody out.
// `master_key_check`: HMAC-SHA256 of a fixed label under the master key, recorded at the first
// start (issue 28 item 8; core/crypto/master-key.ts masterKeyCheck); a start with another key is
// refused (server/startup.ts). Rows, not columns: neither needs a migration.
import { sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const instanceMeta = sqliteTable('instance_meta', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});
