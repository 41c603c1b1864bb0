// `npm run cli -- <command>`: local administration against DATA_DIR, through the same models the
// API uses (DECISIONS §2). Passwords come from CAIRN_PASSWORD, stdin, or a prompt without echo;
// never from a flag (it would show in the process list).
import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { loadConfig } from '../core/config.js';
import { closeDb } from '../db/client.js';
import { openData } from './startup.js';
import { resealCommand } from './cli-reseal.js';
import { backupCommand, BACKUP_USAGE } from './cli-backup.js';
import { exportCommand } from './cli-export.js';
import { importCommand } from './cli-import.js';
import { createLogger } from '../core/logger.js';
import { systemClock } from '../core/clock.js';
import type { Deps } from '../routers/deps.js';
import type { z } from 'zod';
import { TRPCError } from '@trpc/server';
import { appRouter } from '../routers/index.js';
import { createCallerFactory, createContextInner } from '../routers/trpc.js';
import { toProblem } from '../routers/middleware/problems.js';
import { RegisterInput } from '../routers/auth/schema.js';
import { CreateKeyInput } from '../routers/keys/schema.js';

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  user add --email <email>                 create an account (password: prompt, stdin or CAIRN_PASSWORD)
  login --email <email>                    print a first-party session token
  token create --email <email> --scopes <a,b> [--days 30|90|180|365] [--name <name>]
                                           create a personal access token (shown once)
  token create --email <email> --audience dav [--days …] [--name "my phone"]
                                           create an app password for CalDAV clients (shown once;
                                           granted the to-do and container scopes)
  token create --email <email> --audience mcp --scopes <a,b> [--days …] [--name <name>]
                                           create a token for an assistant at /mcp (docs/mcp.md)
  export --email <email> [--out <file>] [--format json|ics]
                                           every piece of the account's content, decrypted, as the
                                           versioned JSON of GET /v1/export (docs/import.md); with
                                           --format ics, every to-do as one iCalendar file
  import <file> --email <email> --from cairn|todoist|things|ics [--dry-run] [--name <name>]
                                           import a Cairn export, a Todoist CSV, a Things 3
                                           main.sqlite or an .ics file (docs/import.md)
  reseal --email <email>                   re-seal the account's values still in sealed format v1
                                           as v2, beside a running server (docs/sealed-format.md)
  approve <code> --email <email> [--scopes <a,b>] [--deny] [--confirm-other-network]
                                           approve (or deny) the OAuth request whose authorize page
                                           shows this nine-digit code; --scopes grants a subset;
                                           a request started from another network than this
                                           machine needs --confirm-other-network

Environment: DATA_DIR (default ./data), CAIRN_MASTER_KEY, CAIRN_PASSWORD.

${BACKUP_USAGE}`;

/**
 * Issue 28 item 14: an empty password (stdin at its end, `< /dev/null`, or Enter at the prompt) is
 * refused as such before any procedure runs, instead of reaching login as "email or password is
 * wrong".
 */
async function readPassword(prompt: string): Promise<string> {
  const password = await readPasswordText(prompt);
  if (password === '') throw new CliError('password: no password given; set CAIRN_PASSWORD, pipe the password on standard input, or run in a terminal to be asked for it');
  return password;
}

async function readPasswordText(prompt: string): Promise<string> {
  if (process.env.CAIRN_PASSWORD) return process.env.CAIRN_PASSWORD;
  if (!process.stdin.isTTY) {
    let data = '';
    for await (const chunk of process.stdin) data += chunk;
    return data.replace(/\r?\n$/, '');
  }
  let muted = false;
  const out = new Writable({
    write(chunk, _enc, cb) {
      if (!muted) process.stderr.write(chunk);
      cb();
    },
  });
  const rl = createInterface({ input: process.stdin, output: out, terminal: true });
  process.stderr.write(prompt);
  muted = true;
  const answer = await new Promise<string>((resolve) => rl.question('', resolve));
  rl.close();
  process.stderr.write('\n');
  return answer;
}

/** A refusal the CLI prints as it is: one sentence per line, no stack, no JSON. */
class CliError extends Error {}

function need(value: string | undefined, flag: string): string {
  if (!value) throw new CliError(`--${flag}: missing\n\n${USAGE}`);
  return value;
}

/** Where an input field comes from on the command line, for messages ("--days: …"). */
const FLAG_OF: Record<string, string> = { email: '--email', password: 'password', scopes: '--scopes', expiresInDays: '--days', name: '--name' };

/**
 * Any error as lines a person reads: a problem's field errors as "<flag>: <message>", else its
 * detail. The rules and messages are the API's own (the same schemas and procedures, via
 * toProblem), so the CLI and POST /v1/auth/register cannot drift apart (issue 13 item 1).
 */
function describe(err: unknown): string {
  if (err instanceof CliError) return err.message;
  const { problem } = toProblem(err);
  if (problem.status >= 500) return err instanceof Error ? err.message : String(err);
  if (problem.errors?.length) {
    return problem.errors
      .map((e) => {
        const field = e.pointer.split('/')[1] ?? '';
        return `${FLAG_OF[field] ?? (field || 'input')}: ${e.message}`;
      })
      .join('\n');
  }
  return `${problem.detail ?? problem.title} (${problem.type})`;
}

/**
 * Checks input against an API schema before asking for a password (a bad flag should not cost a
 * prompt); the procedure then validates with the same schema again.
 */
function check<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw new CliError(describe(new TRPCError({ code: 'BAD_REQUEST', cause: r.error })));
  return r.data;
}

const callerFactory = createCallerFactory(appRouter);

/** The API's procedures in-process, acting with the given token (or none). */
function caller(deps: Deps, token?: string) {
  return callerFactory(createContextInner({ deps, requestId: 'cli', authorization: token ? `Bearer ${token}` : undefined }));
}

async function run(argv: string[], deps: Deps): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      scopes: { type: 'string' },
      days: { type: 'string', default: '90' },
      name: { type: 'string', default: 'cli' },
      help: { type: 'boolean', short: 'h' },
      deny: { type: 'boolean', default: false },
      'confirm-other-network': { type: 'boolean', default: false },
      audience: { type: 'string' },
      out: { type: 'string' },
      format: { type: 'string' },
      from: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
    },
  });
  if (positionals[0] === 'approve' && positionals.length === 2) return approveCommand(deps, positionals[1]!, values);
  if (positionals[0] === 'import' && positionals.length === 2) {
    // Issue 33 item 3 (docs/import.md). `--name` defaults to 'cli' for tokens; for an import it
    // names the project a Todoist CSV becomes, so it is passed only when given.
    await importCommand(deps, need(values.email, 'email'), readPassword, {
      source: need(values.from, 'from'),
      file: positionals[1]!,
      dryRun: values['dry-run'],
      name: argv.includes('--name') ? values.name : undefined,
    });
    return;
  }
  const cmd = positionals.join(' ');
  if (values.help || !cmd) {
    console.log(USAGE);
    return;
  }
  switch (cmd) {
    case 'user add': {
      // POST /v1/auth/register itself (its schema and model); the CLI may add users when
      // sign-up over the API is off (DECISIONS §2).
      const email = need(values.email, 'email');
      check(RegisterInput.pick({ email: true }), { email });
      const password = await readPassword('Password: ');
      const api = caller({ ...deps, config: { ...deps.config, allowSignup: true } });
      const r = await api.auth.register({ email, password });
      // The session register opens is not needed here: end it rather than leave it live 30 days.
      await caller(deps, r.token).auth.logout();
      console.log(JSON.stringify({ user: r.user }, null, 2));
      return;
    }
    case 'login': {
      const r = await caller(deps).auth.login({ email: need(values.email, 'email'), password: await readPassword('Password: ') });
      console.log(r.token);
      return;
    }
    case 'token create': {
      // DECISIONS §8: `--audience dav` makes an app password, which takes no scopes.
      const audience = values.audience;
      const input = check(CreateKeyInput, {
        name: values.name,
        ...(audience !== undefined ? { audience } : {}),
        ...(audience === 'dav' ? {} : { scopes: need(values.scopes, 'scopes').split(',').map((s) => s.trim()).filter(Boolean) }),
        // A number when it reads as one, so "7" is refused by the schema's rule (30|90|180|365), not as a string.
        expiresInDays: /^\d+$/.test(values.days) ? Number(values.days) : values.days,
      });
      const session = await caller(deps).auth.login({ email: need(values.email, 'email'), password: await readPassword('Password: ') });
      const api = caller(deps, session.token);
      try {
        // The key gets its own wrap of the data key (routers/keys/model.ts), so it outlives the
        // session it was made with; that session ends here instead of lingering 30 days (issue 11).
        const key = await api.keys.create(input);
        console.log(JSON.stringify(key, null, 2));
      } finally {
        await api.auth.logout();
      }
      return;
    }
    case 'export':
      // Issue 33 item 2 (docs/import.md): the same stream as GET /v1/export.
      await exportCommand(deps, need(values.email, 'email'), readPassword, { out: values.out, format: values.format });
      return;
    case 'reseal':
      // Issue 29 (docs/sealed-format.md): every v1 value of the account re-sealed as v2.
      await resealCommand(deps, need(values.email, 'email'), readPassword);
      return;
    default:
      throw new CliError(`unknown command "${cmd}"\n\n${USAGE}`);
  }
}

/**
 * `approve <code>`: the trusted-device side of OAuth (DECISIONS §7) from a terminal. It signs in
 * (a first-party session, ended afterwards), shows where and when the request started, what the
 * app asks for (the name as unverified) and the warning, and approves through the same
 * procedures as POST /v1/approvals/{code}/approve.
 */
async function approveCommand(deps: Deps, code: string, values: { email?: string | undefined; scopes?: string | undefined; deny?: boolean | undefined; 'confirm-other-network'?: boolean | undefined }): Promise<void> {
  const email = need(values.email, 'email');
  const session = await caller(deps).auth.login({ email, password: await readPassword('Password: ') });
  const api = caller(deps, session.token);
  try {
    const req = await api.approvals.get({ code });
    // Issue 28 item 1 (docs/oauth.md "Approval phishing"): where and when it started, and the
    // warning. The CLI runs on the server's own machine, so its network is loopback.
    console.error(`Started:   ${req.startedFrom.summary}\nCallback:  ${req.redirectUri}\nApp:       ${req.client.name} (unverified name)\nRequested: ${req.scopes.join(' ')}\n\n${req.warning}\n`);
    if (values.deny) {
      await api.approvals.deny({ code });
      console.log('denied');
      return;
    }
    if (req.confirmOtherNetworkRequired && !values['confirm-other-network']) {
      throw new CliError(
        `This request was started from another network (${req.startedFrom.network}) than this machine. If someone gave you this code, deny it (--deny).\n` +
          'Approve only if you started it yourself on that network: run again with --confirm-other-network.',
      );
    }
    const scopes = values.scopes ? values.scopes.split(',').map((s) => s.trim()).filter(Boolean) : req.scopes;
    const out = await api.approvals.approve({ code, scopes: scopes as typeof req.scopes, ...(values['confirm-other-network'] ? { confirmOtherNetwork: true } : {}) });
    console.log(`approved: ${out.scopes.join(' ')}`);
  } finally {
    await api.auth.logout();
  }
}

async function main(): Promise<void> {
  // Issue 11.5: the CLI may be the first to create DATA_DIR and cairn.db; they are private, as
  // the server makes them (server/startup.ts creates the directory 0700; this umask makes files 0600).
  process.umask(0o077);
  const argv = process.argv.slice(2);
  // Issue 33 (docs/operations.md "Backups"): a restore must not open, let alone migrate, the
  // DATA_DIR it replaces; a backup reads through its own read-only connection.
  if (argv[0] === 'backup' || argv[0] === 'restore') {
    process.exitCode = await backupCommand(argv, { readPassword });
    return;
  }
  const config = loadConfig();
  // The server's own checks (issue 28 items 8 and 9): a wrong master key or an unusable DATA_DIR
  // is refused here too, before anything is created, rather than making a second account.
  const { db, keys, warnings } = openData(config);
  for (const w of warnings) console.error(`warning: ${w}`);
  const deps: Deps = { db, config, keys, clock: systemClock, log: createLogger('silent') };
  try {
    await run(argv, deps);
  } finally {
    closeDb(db);
  }
}

main().catch((err) => {
  console.error(describe(err));
  process.exit(1);
});
