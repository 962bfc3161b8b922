import t from 'tap';
import { hashSecret, verifySecret, type KeyStore } from '../core/store-api.js';
import { createGateway } from '../core/index.js';
import { Tokens } from '../core/plugin-api.js';
import { hashSecretSync, isSecretHash } from '../core/keys/secret-hash.js';

t.test('a hashed secret verifies, a wrong one does not, and the form is scrypt$salt$hash', async (t) => {
  const hash = await hashSecret('correct horse battery');
  t.match(hash, /^scrypt\$[A-Za-z0-9+/]+={0,2}\$[A-Za-z0-9+/]+={0,2}$/);
  t.ok(isSecretHash(hash));
  t.equal(await verifySecret('correct horse battery', hash), true);
  t.equal(await verifySecret('correct horse batter', hash), false);
  t.equal(await verifySecret('', hash), false);
});

t.test('every hash has its own salt; the blocking variant is interchangeable', async (t) => {
  const a = await hashSecret('same secret');
  const b = hashSecretSync('same secret');
  t.not(a, b);
  t.equal(await verifySecret('same secret', a), true);
  t.equal(await verifySecret('same secret', b), true);
});

t.test('malformed hashes never match', async (t) => {
  for (const bad of ['', 'scrypt$', 'scrypt$$', 'bcrypt$abc$def', 'scrypt$abc', 'plain-secret']) {
    t.equal(isSecretHash(bad), false, bad);
    t.equal(await verifySecret('plain-secret', bad), false, bad);
  }
});

t.test('config keys keep only the hash of their secret', async (t) => {
  const gateway = await createGateway({
    config: {
      log: { level: 'silent' },
      keys: [
        { key: 'secret-key-0001', plan: 'growth', secret: 'the-secret-0001' },
        { key: 'hashed-key-0002', plan: 'growth', secretHash: hashSecretSync('the-secret-0002') },
        { key: 'no-secret-0003', plan: 'growth' },
      ],
      networks: [{ name: 'n', families: ['none'], upstreams: [{ url: 'http://127.0.0.1:1' }] }],
    },
    plugins: [{ name: 'none', register: (c) => void c.register(Tokens.Family, { useValue: { name: 'none', methods: [] } }) }],
  });
  t.teardown(() => gateway.close());
  const keys = gateway.container.resolve<KeyStore>(Tokens.KeyStore);
  const first = await keys.find('secret-key-0001');
  t.ok(first?.secretHash !== undefined && isSecretHash(first.secretHash));
  t.equal(await verifySecret('the-secret-0001', first!.secretHash!), true);
  t.equal(await verifySecret('the-secret-0002', (await keys.find('hashed-key-0002'))!.secretHash!), true);
  t.equal((await keys.find('no-secret-0003'))!.secretHash, undefined);
  t.notOk(JSON.stringify(gateway.config).includes('the-secret-0001'), 'the plaintext is not kept in the resolved config');
});
