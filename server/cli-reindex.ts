// `npm run cli -- restore reindex --email <email>` (issue 33 item 1; docs/operations.md
// "Restoring without the master key"): after `restore --new-master-key`, no account is found by
// its email, because the email index is an HMAC under a key derived from the master key, and the
// email itself is sealed under the user's data key. Given an email and that account's password,
// this finds the account among those the restore left stale (one scrypt per stale account: an
// offline command on the server's machine, never a request path), opens the sealed email with the
// data key the password unwraps, checks it is the email given, and writes its index under the new
// key. Until then, sign-in by that email fails and registering it again would make a second,
// empty account: run it for every user before opening the server to them.
import { eq } from 'drizzle-orm';
import type { Config } from '../core/config.js';
import { hmacSha256 } from '../core/crypto/secrets.js';
import { unwrapDataKey } from '../core/crypto/keywrap.js';
import { verifyPassword, type PasswordRecord } from '../core/crypto/password.js';
import { closeDb } from '../db/client.js';
import { instanceMeta, users } from '../db/schema/index.js';
import { normaliseEmail, userEmail } from '../routers/auth/model.js';
import { openData } from './startup.js';
import { STALE_EMAIL_INDEX } from './backup.js';

export async function reindexEmail(
  config: Config,
  email: string,
  readPassword: (prompt: string) => Promise<string>,
  o: { out: (l: string) => void; err: (l: string) => void },
): Promise<number> {
  const { db, keys } = openData(config);
  try {
    const meta = db.select().from(instanceMeta).where(eq(instanceMeta.key, STALE_EMAIL_INDEX)).get();
    const stale = meta ? (JSON.parse(meta.value) as string[]) : [];
    if (!stale.length) {
      o.err('restore reindex: no account waits for its email index (this data was not restored with --new-master-key, or every account is done)');
      return 1;
    }
    const password = await readPassword('Password: ');
    const wanted = normaliseEmail(email);
    for (const id of stale) {
      const row = db.select().from(users).where(eq(users.id, id)).get();
      if (!row) continue;
      const kek = await verifyPassword(password, { salt: row.pwSalt, params: JSON.parse(row.pwParams) as PasswordRecord['params'], verifier: row.pwVerifier });
      if (!kek) continue;
      const dek = unwrapDataKey(kek, row.id, 'password', row.pwWrappedKey);
      let found: string;
      try {
        found = normaliseEmail(userEmail(dek, row));
      } finally {
        dek.fill(0);
      }
      if (found !== wanted) continue;
      const index = hmacSha256(keys.emailIndex, wanted);
      const taken = db.select({ id: users.id }).from(users).where(eq(users.emailIndex, index)).get();
      if (taken && taken.id !== id) {
        o.err(`restore reindex: another account (${taken.id}) was registered with this email after the restore; delete it first (the restored one ${id} holds the data)`);
        return 1;
      }
      const left = stale.filter((s) => s !== id);
      db.transaction((tx) => {
        tx.update(users).set({ emailIndex: index }).where(eq(users.id, id)).run();
        if (left.length) tx.update(instanceMeta).set({ value: JSON.stringify(left) }).where(eq(instanceMeta.key, STALE_EMAIL_INDEX)).run();
        else tx.delete(instanceMeta).where(eq(instanceMeta.key, STALE_EMAIL_INDEX)).run();
      });
      o.out(JSON.stringify({ reindexed: id, accountsLeft: left.length }));
      return 0;
    }
    o.err(`restore reindex: no account waiting for its index has this email and password (${stale.length} waiting)`);
    return 1;
  } finally {
    closeDb(db);
  }
}
