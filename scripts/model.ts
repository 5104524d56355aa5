// `npm run model`: checks the Promela models in model/ with spin (docs/model.md). Every check of
// the real protocol must find no error; every known-bad variant must be caught (spin must find its
// counterexample), or the models could not fail and would prove nothing. Prints, per check, the
// states stored, the transitions, the time and the result; exits 1 when any check disappoints.
//   npm run model                  every check
//   npm run model -- --only <text> the checks whose name contains <text>
//   npm run model -- --keep        keep each check's directory (pan, trail) and print it
//   npm run model -- --stamp       re-stamp the models after looking at the changed sources
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkStamps, restamp } from './model-stamps.js';

const root = join(fileURLToPath(import.meta.url), '..', '..');

interface Check {
  readonly name: string;
  readonly model: string;
  /** spin -D switches (see the model's header). */
  readonly defines: readonly string[];
  /** Checks the model's ltl claim with weak fairness (-a -f) rather than its assertions alone. */
  readonly ltl?: boolean;
  /**
   * pan's search depth (-m), default 20,000,000. Its stack is allocated up front: a small model
   * searched with the default spends seconds on that alone. Too small a depth cuts the search,
   * which fails a check that must hold.
   */
  readonly depth?: number;
  /** 'holds': no error; 'caught': a bad variant, spin must find its error; 'limit': a documented limit. */
  readonly expect: 'holds' | 'caught' | 'limit';
  readonly what: string;
}

const CHECKS: readonly Check[] = [
  {
    name: 'lock',
    model: 'lock.pml',
    defines: ['NC=2', 'CRASH'],
    expect: 'holds',
    what: 'mutual exclusion, beliefs within validity, repeats = one run, TTLs; every fault, a crash',
  },
  {
    name: 'lock-reenter',
    model: 'lock.pml',
    defines: ['NC=2', 'REENTER'],
    expect: 'holds',
    what: 're-entry: hold counts exact under lost replies (settled in the background)',
  },
  {
    name: 'lock-fenced',
    model: 'lock.pml',
    defines: ['NC=2', 'FENCE', 'LOSSES=0'],
    expect: 'holds',
    what: 'fencing tokens: a holder is never refused by the resource',
  },
  {
    name: 'lock-force-unlock',
    model: 'lock.pml',
    defines: ['NC=2', 'FORCE', 'LOSSES=0'],
    expect: 'holds',
    what: 'force-unlock sent twice: one run; hand-over after it',
  },
  {
    name: 'lock-restart',
    model: 'lock.pml',
    defines: ['NC=2', 'RESTART', 'NO_BELIEF_CHECK', 'LOSSES=0'],
    expect: 'holds',
    what: 'a restart losing every key: mutual exclusion in Redis and TTLs still hold',
  },
  {
    name: 'lock-restart-belief',
    model: 'lock.pml',
    defines: ['NC=2', 'RESTART', 'LOSSES=0'],
    expect: 'limit',
    what: 'documented limit (guarantees.md 5): a restart forgets a hold its holder still believes in',
  },
  {
    name: 'lock-no-stranded-waiter',
    model: 'lock.pml',
    defines: ['NC=2', 'CRASH', 'LOSSES=0', 'LIVENESS', 'NO_BELIEF_CHECK'],
    ltl: true,
    expect: 'holds',
    what: 'ltl strand: no waiter waits forever on a free lock, every message to it lost',
  },
  {
    name: 'bad: hand-over trusted without validity',
    model: 'lock.pml',
    defines: ['NC=2', 'LOSSES=0', 'BAD_TRUST_HANDOVER'],
    expect: 'caught',
    what: 'a late hand-over message taken as a grant: two holders',
  },
  {
    name: 'bad: release without marker',
    model: 'lock.pml',
    defines: ['NC=2', 'BAD_NO_MARKER'],
    expect: 'caught',
    what: 'a re-sent last release answers "not held" about the release that happened',
  },
  {
    name: 'bad: queue head never lapses',
    model: 'lock.pml',
    defines: ['NC=2', 'CRASH', 'LOSSES=0', 'LIVENESS', 'NO_BELIEF_CHECK', 'BAD_NO_LAPSE'],
    ltl: true,
    expect: 'caught',
    what: 'a dead waiter at the head strands the live one behind it on a free lock',
  },
  {
    name: 'lock-3-clients',
    model: 'lock.pml',
    defines: ['NC=3', 'LOSSES=0', 'ACQS=1'],
    depth: 1_000_000,
    expect: 'holds',
    what: 'three clients, one lock() each: a queue of two behind a holder, hand-over down the queue',
  },
  {
    name: 'semaphore',
    model: 'semaphore.pml',
    defines: ['NC=2', 'CRASH'],
    depth: 200_000,
    expect: 'holds',
    what: 'permits conserved, beliefs counted by Redis, repeats = one run, give-ups find their grant; every fault',
  },
  {
    name: 'semaphore-3-clients',
    model: 'semaphore.pml',
    defines: ['NC=3', 'CRASH', 'LOSSES=0', 'LIVENESS'],
    ltl: true,
    depth: 2_000_000,
    expect: 'holds',
    what: 'three clients: the same assertions, and ltl strand: no waiter waits forever on its free permits',
  },
  {
    name: 'semaphore-admin',
    model: 'semaphore.pml',
    defines: ['NC=1', 'ADMIN', 'DRAIN'],
    depth: 100_000,
    expect: 'holds',
    what: 'trySetPermits, addPermits, drainPermits each sent again: one run, the first answer',
  },
  {
    name: 'semaphore-short-command-timeout',
    model: 'semaphore.pml',
    defines: ['NC=2', 'P=2'],
    depth: 200_000,
    expect: 'holds',
    what: 'commandTimeout under ~1 s: a retry pause as long as it; the grant memory covers the pause cap',
  },
  {
    name: 'bad: semaphore grant memory without the pause',
    model: 'semaphore.pml',
    defines: ['NC=2', 'P=2', 'BAD_PAUSELESS_MEMORY'],
    depth: 200_000,
    expect: 'caught',
    what: 'the defect the model found: 5 commandTimeouts, a pause longer than the spare one; permits lost',
  },
  {
    name: 'bad: semaphore grant memory of 2 commandTimeouts',
    model: 'semaphore.pml',
    defines: ['NC=2', 'BAD_GRANT_MEMORY'],
    depth: 200_000,
    expect: 'caught',
    what: 'the old defect: a give-up after a lost granted reply finds no grant; permits lost',
  },
  {
    name: 'bad: semaphore release not safe to repeat',
    model: 'semaphore.pml',
    defines: ['NC=2', 'BAD_NO_ONCE'],
    depth: 200_000,
    expect: 'caught',
    what: 'add-permits without lib/once: a re-sent release creates permits',
  },
  {
    name: 'bad: semaphore place never lapses',
    model: 'semaphore.pml',
    defines: ['NC=2', 'CRASH', 'LOSSES=0', 'LIVENESS', 'BAD_NO_LAPSE'],
    ltl: true,
    depth: 200_000,
    expect: 'caught',
    what: 'a dead head reserves its permits forever: the live waiter behind it is stranded',
  },
  {
    name: 'permit-expirable-semaphore',
    model: 'permit-expirable-semaphore.pml',
    defines: ['NC=2', 'CRASH'],
    depth: 200_000,
    expect: 'holds',
    what: 'leases Redis counts for every proven belief, no permit left out, repeats = one run; every fault',
  },
  {
    name: 'permit-expirable-semaphore-3-clients',
    model: 'permit-expirable-semaphore.pml',
    defines: ['NC=3', 'CRASH', 'LOSSES=0'],
    depth: 4_000_000,
    expect: 'holds',
    what: 'three clients, two permits, leases lapsing, a crash',
  },
  {
    name: 'permit-expirable-semaphore-admin',
    model: 'permit-expirable-semaphore.pml',
    defines: ['NC=1', 'ADMIN'],
    depth: 100_000,
    expect: 'holds',
    what: 'trySetPermits and addPermits each sent again: one run, the first answer',
  },
  {
    name: 'permit-expirable-semaphore-no-stranded-waiter',
    model: 'permit-expirable-semaphore.pml',
    defines: ['NC=2', 'CRASH', 'LOSSES=0', 'LIVENESS'],
    ltl: true,
    depth: 200_000,
    expect: 'holds',
    what: "ltl strand: a crashed holder's leased permit comes back to the waiter, every message lost",
  },
  {
    name: 'bad: permit release without marker',
    model: 'permit-expirable-semaphore.pml',
    defines: ['NC=2', 'BAD_NO_MARKER'],
    depth: 200_000,
    expect: 'caught',
    what: 'a re-sent release answers "not held" about the release that happened',
  },
  {
    name: 'bad: permit lease never lapses',
    model: 'permit-expirable-semaphore.pml',
    defines: ['NC=3', 'LOSSES=0', 'BAD_NO_LAPSE'],
    depth: 4_000_000,
    expect: 'caught',
    what: 'expirable-leases drops no lease that ran out: a lapsed permit still counts as out',
  },
];

interface Result {
  readonly errors: number;
  readonly states: string;
  readonly transitions: string;
  readonly seconds: number;
  readonly complete: boolean;
  readonly detail: string;
}

/** The check's spin -D switches. */
function switches(check: Check): string[] {
  return check.defines.map((define) => `-D${define}`);
}

/**
 * What a check's result means: the real protocol must hold over a complete search (an output
 * without an error count proves nothing); a bad variant or a documented limit must be found.
 */
function judge(check: Check, result: Result): { ok: boolean; verdict: string } {
  if (check.expect === 'holds') {
    if (result.errors > 0) return { ok: false, verdict: `FAILED: ${result.detail}` };
    if (result.errors !== 0) return { ok: false, verdict: 'FAILED: no result from the search' };
    if (!result.complete) return { ok: false, verdict: 'FAILED: search cut short' };
    return { ok: true, verdict: 'holds' };
  }
  if (!(result.errors > 0)) return { ok: false, verdict: 'FAILED: not caught' };
  return { ok: true, verdict: `${check.expect === 'caught' ? 'caught' : 'limit shown'}: ${result.detail}` };
}

function run(check: Check, keep: boolean): Result {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-model-'));
  try {
    copyFileSync(join(root, 'model', check.model), join(dir, check.model));
    const defines = switches(check);
    const started = Date.now();
    execFileSync('spin', ['-a', ...defines, check.model], { cwd: dir, stdio: 'pipe' });
    // Exhaustive search (no bitstate): COLLAPSE compresses states; SAFETY drops cycle checks
    // where no ltl claim is checked; NFAIR=3 gives weak fairness room for every process.
    const cc = check.ltl ? ['-DNFAIR=3'] : ['-DSAFETY'];
    execFileSync('gcc', ['-O1', '-w', '-DCOLLAPSE', '-DMEMLIM=4096', ...cc, '-o', 'pan', 'pan.c'], { cwd: dir });
    const pan = spawnSync('./pan', [`-m${check.depth ?? 20_000_000}`, ...(check.ltl ? ['-a', '-f'] : [])], {
      cwd: dir,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    const seconds = (Date.now() - started) / 1000;
    const out = pan.stdout;
    const errors = Number(/errors: (\d+)/.exec(out)?.[1] ?? NaN);
    const states = /([\d.e+]+) states, stored/.exec(out)?.[1] ?? '?';
    const transitions = /([\d.e+]+) transitions/.exec(out)?.[1] ?? '?';
    // A search cut short by its depth or memory bound proves nothing.
    const complete = !/max search depth too small|reached -DMEMLIM bound|out of memory/.test(out);
    const detail = (/pan:1: (.*?) \(at depth/.exec(out)?.[1] ?? /acceptance cycle/.exec(out)?.[0] ?? '').trim();
    if (keep) console.log(`  kept in ${dir} (replay: cd ${dir} && spin -t -p -g ${defines.join(' ')} ${check.model})`);
    return { errors, states, transitions, seconds, complete, detail };
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

function main(): number {
  const args = process.argv.slice(2);
  if (args.includes('--stamp')) {
    const changed = restamp(root);
    console.log(changed.length === 0 ? 'every model was stamped already' : `re-stamped ${changed.join(', ')}`);
    return 0;
  }
  const stale = checkStamps(root);
  for (const { model, source, reason } of stale) console.log(`stale stamp: ${model}: ${source} ${reason}`);
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  const keep = args.includes('--keep');
  const version = spawnSync('spin', ['-V'], { encoding: 'utf8' }).stdout?.trim() ?? 'spin not found';
  console.log(`${version}; exhaustive search (no bitstate), COLLAPSE compression`);
  let failed = stale.length;
  const started = Date.now();
  const width = Math.max(...CHECKS.map((check) => check.name.length));
  for (const check of CHECKS.filter((candidate) => only === undefined || candidate.name.includes(only))) {
    const result = run(check, keep);
    const { ok, verdict } = judge(check, result);
    if (!ok) failed++;
    console.log(
      `${ok ? 'ok  ' : 'FAIL'} ${check.name.padEnd(width)} ${result.states.padStart(10)} states ` +
        `${result.transitions.padStart(11)} transitions ${result.seconds.toFixed(1).padStart(6)} s  ${verdict}`,
    );
    console.log(`     spin -a ${switches(check).join(' ')} model/${check.model}: ${check.what}`);
  }
  console.log(
    `${failed === 0 ? 'all checks as expected' : `${failed} check(s) not as expected`} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  return failed === 0 ? 0 : 1;
}

process.exitCode = main();
