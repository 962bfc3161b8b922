/**
 * A queue worker: reads jobs (one JSON object per line: `{"id", "apiKey", "body"}`, optionally
 * `"network"`) from a file, or from standard input with `-`, runs them through the gateway at most
 * four at a time, and prints one result line per job as it finishes, then what the demo key spent.
 *
 *   node --import tsx queue.ts jobs.ndjson
 *   some-producer | node --import tsx queue.ts -
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { defer, filter, lastValueFrom, map, scan, tap } from 'rxjs';
import { Tokens } from 'tollgate/plugin';
import { type CreditLedger } from 'tollgate/store';
import { runJobs, type Job } from './worker.js';
import { closeDemoGateway, demoGateway, DEMO_KEY_ID } from './gateway.js';

const source = process.argv[2];
if (source === undefined) {
  console.error('usage: node --import tsx queue.ts <jobs.ndjson | ->');
  process.exit(2);
}

// Lazy: the file is opened when the worker subscribes, so no line is read before anyone listens.
const jobs = defer(() => createInterface({ input: source === '-' ? process.stdin : createReadStream(source), crlfDelay: Infinity })).pipe(
  filter((line) => line.trim() !== ''),
  map((line) => JSON.parse(line) as Job),
);

let exitCode = 0;
try {
  const gateway = await demoGateway();
  const spent = await lastValueFrom(
    runJobs(jobs, 4).pipe(
      tap((result) => console.log(JSON.stringify(result))),
      scan((sum, result) => sum + result.credits, 0),
    ),
    { defaultValue: 0 },
  );
  const ledger = gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  const plan = gateway.config.plans[gateway.config.keys[0]!.plan]!;
  const balance = await ledger.balance(DEMO_KEY_ID, plan.dailyCredits, new Date());
  console.log(`credits charged for these jobs: ${spent}; key "${DEMO_KEY_ID}" today: ${balance.used} used, ${balance.remaining} left`);
} catch (error) {
  console.error(`queue worker failed: ${(error as Error).message}`);
  exitCode = 1;
} finally {
  await closeDemoGateway();
}
process.exit(exitCode);
