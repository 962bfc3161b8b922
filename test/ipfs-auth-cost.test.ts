/**
 * A refused file-storage key costs what a wrong secret costs, so the time of a refusal does not tell
 * which keys exist. Counted, not timed: every refusal runs exactly one scrypt verification, a wrong
 * secret against the key's hash, anything else against a decoy hash of the same form and cost.
 */
import t from 'tap';
import { request } from 'undici';
import { Tokens } from '../core/plugin-api.js';
import { verifySecret, type KeyStore } from '../core/store-api.js';
import { type TollgatePlugin } from '../core/index.js';
import { isSecretHash } from '../core/keys/secret-hash.js';
import { IPFS_SECRET_CHECK } from '../plugins/ipfs/secret-check.js';
import { IPFS_KEY, IPFS_SECRET, NO_SECRET_KEY, basic, startIpfsGateway } from './helpers/ipfs-gateway.js';

/** Every verification the gateway runs: the secret's hash it was checked against. */
const checked: string[] = [];
const countingCheck: TollgatePlugin = {
  name: 'counting-secret-check',
  register(container) {
    container.register(IPFS_SECRET_CHECK, { useValue: (secret: string, secretHash: string) => (checked.push(secretHash), verifySecret(secret, secretHash)) });
  },
};

// Verifications are counted here, several from one address within a second: the refusal budget, which
// would turn some into 429 (test/ipfs-auth-flood.test.ts), is set out of the way.
const gw = await startIpfsGateway({ plugins: [countingCheck], ipfs: { secretChecksPerSourcePerSecond: 1000, secretChecksPerSecond: 1000 } });
t.teardown(() => gw.close());
const realHash = (await gw.gateway.container.resolve<KeyStore>(Tokens.KeyStore).find(IPFS_KEY))!.secretHash!;

/** The hashes verified while answering one call with `authorization`, and its status. */
async function verificationsOf(authorization: string): Promise<{ status: number; hashes: string[] }> {
  checked.length = 0;
  const res = await request(`${gw.api}/version`, { method: 'POST', headers: { authorization } });
  await res.body.text();
  return { status: res.statusCode, hashes: [...checked] };
}

/** The salt and hash lengths of a `scrypt$<salt>$<hash>`: the same lengths, the same scrypt work. */
const shape = (hash: string): number[] => hash.split('$').slice(1).map((part) => Buffer.from(part, 'base64').length);

t.test('a wrong secret runs one verification, against the key\'s hash', async (t) => {
  const wrong = await verificationsOf(basic(IPFS_KEY, 'wrong-secret-0001'));
  t.equal(wrong.status, 401);
  t.same(wrong.hashes, [realHash]);
});

t.test('an unknown key and a key without a secret each run one verification against the decoy', async (t) => {
  const decoys: string[] = [];
  for (const [what, authorization] of [
    ['unknown key', basic('no-such-key-000000001', 'wrong-secret-0001')],
    ['key without a secret', basic(NO_SECRET_KEY, 'wrong-secret-0001')],
  ] as const) {
    const refused = await verificationsOf(authorization);
    t.equal(refused.status, 401, what);
    t.equal(refused.hashes.length, 1, `${what}: exactly one scrypt verification`);
    const decoy = refused.hashes[0]!;
    t.not(decoy, realHash, `${what}: not against a real key's hash`);
    t.ok(isSecretHash(decoy), `${what}: against a real scrypt hash`);
    t.same(shape(decoy), shape(realHash), `${what}: of the same salt and hash sizes, so the same work`);
    decoys.push(decoy);
  }
  t.equal(new Set(decoys).size, 1, 'one decoy hash, made once');
});

t.test('the right secret runs one verification, then none while it is remembered', async (t) => {
  const first = await verificationsOf(basic(IPFS_KEY, IPFS_SECRET));
  t.equal(first.status, 200);
  t.same(first.hashes, [realHash]);
  const again = await verificationsOf(basic(IPFS_KEY, IPFS_SECRET));
  t.equal(again.status, 200);
  t.same(again.hashes, [], 'a verified secret is remembered (secretCacheMs)');
});
