// `cairn reseal --email <email>` (`npm run cli -- reseal --email <email>`; issue 29,
// docs/sealed-format.md "Re-sealing an account"): re-seals every value of one account still in
// sealed format v1 as v2, under the same data key, while the server keeps running on the same
// DATA_DIR. It asks for the account's password (CAIRN_PASSWORD, stdin or a prompt, as every CLI
// command: server/cli.ts readPassword), since only a credential opens the data key; no session is
// made and no credential ends. The work is routers/auth/reseal.ts.
import type { Deps } from '../routers/deps.js';
import { forgetKeys, resealAccount, unlockAccount, type ResealOptions } from '../routers/auth/reseal.js';

/** What the command prints on stdout (JSON), for people and scripts. */
export type ResealSummary = {
  resealed: number;
  byColumn: Record<string, number>;
  /** v1 wraps of credentials made before the upgrade: they end with their credential. */
  leftV1Wraps: Record<string, number>;
  unopened: number;
  batches: number;
  longestBatchMs: number;
  walTruncated: boolean;
};

/**
 * The command. `readPassword` is the CLI's (server/cli.ts); progress goes to stderr, the summary to
 * stdout. Throws (exit 1) on a wrong password, on a password change or key rotation committed
 * while it ran (run it again), and when some value did not open (left as it was, named).
 */
export async function resealCommand(
  deps: Deps,
  email: string,
  readPassword: (prompt: string) => Promise<string>,
  opts: ResealOptions & { out?: (line: string) => void; err?: (line: string) => void } = {},
): Promise<ResealSummary> {
  const out = opts.out ?? ((l: string) => process.stdout.write(l + '\n'));
  const err = opts.err ?? ((l: string) => process.stderr.write(l + '\n'));
  const unlocked = await unlockAccount(deps, email, await readPassword('Password: '));
  try {
    const report = await resealAccount(deps, unlocked, {
      ...opts,
      onBatch: async (p) => {
        err(`re-sealed ${p.done} of ${p.total} values (batch ${p.batch}, ${p.ms.toFixed(0)} ms)`);
        await opts.onBatch?.(p);
      },
    });
    const summary: ResealSummary = {
      resealed: Object.values(report.resealed).reduce((a, b) => a + b, 0),
      byColumn: report.resealed,
      leftV1Wraps: report.left,
      unopened: report.unopened.length,
      batches: report.batches,
      longestBatchMs: Math.round(report.longestBatchMs),
      walTruncated: report.walTruncated,
    };
    out(JSON.stringify(summary, null, 2));
    const wraps = Object.values(report.left).reduce((a, b) => a + b, 0);
    if (wraps) {
      err(
        `${wraps} key wrap(s) of sessions, tokens or OAuth grants made before the upgrade stay in format v1: only their own secret re-makes them. ` +
          'They end with their credential; `POST /v1/auth/revoke-all` or a key rotation ends them now.',
      );
    }
    if (!report.walTruncated) err('The WAL could not be truncated (the server kept reading); it will be at the next checkpoint. Run reseal again to retry now.');
    if (report.unopened.length) {
      throw new Error(
        `${report.unopened.length} value(s) did not open under this account's key and were left as they are: ` +
          report.unopened.map((u) => `${u.table} ${u.id}`).join(', '),
      );
    }
    return summary;
  } finally {
    forgetKeys(unlocked);
  }
}
