import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startExampleGateway } from './helpers/example-gateway.js';

// The file-storage guide's Pinning Service API example, run as written (curl) against the bundled
// gateway's default configuration: the demo key and secret, the ipfs-devnet network, the embedded node.

const guide = readFileSync(new URL('../docs/file-storage.md', import.meta.url), 'utf8');
const section = guide.slice(guide.indexOf('## The Pinning Service API'));
const [script] = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]);

t.test('the guide\'s Pinning Service API example works against the default configuration', async (t) => {
  t.match(script, /Authorization: Bearer \$T/);
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-psa-docs-'));
  const work = mkdtempSync(join(tmpdir(), 'tollgate-psa-docs-cwd-'));
  const gw = await startExampleGateway([], { plugins: { devnet: { helia: { dataDir } } } });
  t.teardown(async () => {
    await gw.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  const { stdout } = await promisify(execFile)('sh', ['-ec', script!.replaceAll('http://127.0.0.1:8545', gw.origin)], { cwd: work });
  const [created, listed, deleted] = stdout.split('\n');
  const status = JSON.parse(created!) as { requestid: string; status: string; pin: { cid: string } };
  t.match(status, { status: 'queued', pin: { name: 'pin-me.txt', meta: { app_id: 'docs' } }, delegates: [] }, 'create: queued');
  const results = JSON.parse(listed!) as { count: number; results: Array<{ requestid: string }> };
  t.equal(results.count, 1, 'list by a case-insensitive part of the name');
  t.equal(results.results[0]!.requestid, status.requestid);
  t.equal(deleted, '202', 'delete');
});
