// Spec §7 `account_too_large`: operations that decrypt inside the request (a filter on a sealed
// field such as `status`, open counts, completing a heading) may open at most
// LIMITS.decryptRowsPerRequest rows beyond the page they return. Past that the request fails
// with 422 `account_too_large` instead of running unbounded. `config.decryptRowLimit` overrides the
// limit (tests use a small one).
import { LIMITS, type Config } from './config.js';
import { AppError } from './errors.js';

export class DecryptBudget {
  private used = 0;
  constructor(readonly limit: number) {}

  /** Counts `n` more decrypted rows; throws `account_too_large` when the limit is passed. */
  spend(n = 1): void {
    this.used += n;
    if (this.used > this.limit) {
      throw new AppError(
        'account_too_large',
        `This operation would decrypt more than ${this.limit} rows in one request. Narrow it (for example by container) or use a list without a sealed-field filter.`,
      );
    }
  }

  get spent(): number {
    return this.used;
  }
}

/** The request's budget. Takes any holder of the config (a `Deps`), so this ground-floor module
 * needs nothing from the floors above it. */
export function decryptBudget(deps: { config: Pick<Config, 'decryptRowLimit'> }): DecryptBudget {
  return new DecryptBudget(deps.config.decryptRowLimit ?? LIMITS.decryptRowsPerRequest);
}
