import t from 'tap';
import { Writable } from 'node:stream';
import { gatewayLogger } from '../plugins/metrics/index.js';

// The gateway logger blanks credentials wherever a log line puts them: API keys and secrets, and x402's
// settlement key, the wallets' key secret and a payment's signed authorization.

function logged(write: (logger: ReturnType<typeof gatewayLogger>) => void): Record<string, unknown> {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _encoding, done) { lines.push(chunk.toString()); done(); } });
  const logger = gatewayLogger('info', sink);
  write(logger);
  logger.flush();
  t.equal(lines.length, 1, 'one line');
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

const SETTLEMENT_KEY = `0x${'ab'.repeat(32)}`;
const KEY_SECRET = 'wallet-key-secret-of-at-least-32-chars';
const SIGNATURE = 'eyJ4NDAyVmVyc2lvbiI6Mn0=';

t.test('x402 secrets at the top level and one level down are redacted', async (t) => {
  const line = logged((log) => log.info({
    settlementKey: SETTLEMENT_KEY,
    facilitator: { settlementKey: SETTLEMENT_KEY, rpcUrl: 'http://127.0.0.1:8545' },
    wallets: { keySecret: KEY_SECRET, plan: 'x402' },
    headers: { 'payment-signature': SIGNATURE, host: 'gateway.example' },
    req: { headers: { 'payment-signature': SIGNATURE } },
  }, 'settings'));
  const text = JSON.stringify(line);
  for (const secret of [SETTLEMENT_KEY, KEY_SECRET, SIGNATURE]) t.notOk(text.includes(secret), `${secret.slice(0, 12)}… not in the line`);
  t.match(line, {
    settlementKey: '[redacted]',
    facilitator: { settlementKey: '[redacted]', rpcUrl: 'http://127.0.0.1:8545' },
    wallets: { keySecret: '[redacted]', plan: 'x402' },
    headers: { 'payment-signature': '[redacted]', host: 'gateway.example' },
    req: { headers: { 'payment-signature': '[redacted]' } },
  }, 'what is not secret is kept');
});

t.test('the credentials redacted before are still redacted', async (t) => {
  const line = logged((log) => log.info({ apiKey: 'k', credentials: { apiKey: 'k' }, headers: { authorization: 'Basic x' } }, 'call'));
  t.match(line, { apiKey: '[redacted]', credentials: '[redacted]', headers: { authorization: '[redacted]' } });
});
