import t from 'tap';
import bs58 from 'bs58';
import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import { startLiteSvmInstance, tokenAccountData } from '@tollgate/devnet';
import { post, rpc } from './helpers/json-rpc.js';

// The devnet Solana node's ledger as agave keeps one: a transaction that fails without preflight
// still lands with its error and fee, priority fees are charged and reported, base-58 sends work.
const solana = await startLiteSvmInstance('litesvm#ledger', { slotMs: 0 });
t.teardown(() => solana.stop());
const { node } = solana;
node.advance(3);

async function call<T>(method: string, params?: unknown[]): Promise<T> {
  const answer = (await post(solana.url, rpc(method, params))).json as { result?: T; error?: unknown };
  if (answer.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
  return answer.result as T;
}

const payer = Keypair.generate();
await call('requestAirdrop', [payer.publicKey.toBase58(), 1_000_000_000]);
const blockhash = (): string => node.latestBlockhash('processed').blockhash;
const signed = (tx: Transaction): Buffer => { tx.recentBlockhash = blockhash(); tx.feePayer = payer.publicKey; tx.sign(payer); return tx.serialize(); };

t.test('a failing transfer sent with skipPreflight lands with its error and pays its fee', async (t) => {
  const before = await call<{ value: number }>('getBalance', [payer.publicKey.toBase58(), { commitment: 'processed' }]);
  const wire = signed(new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 5_000_000_000 })));
  const signature = await call<string>('sendTransaction', [wire.toString('base64'), { encoding: 'base64', skipPreflight: true }]);
  node.advance(1);
  const [status] = (await call<{ value: Array<{ err: unknown; status: unknown }> }>('getSignatureStatuses', [[signature]])).value;
  t.same(status!.err, { InstructionError: [0, { Custom: 1 }] }, 'the system program\'s insufficient-funds error');
  t.same(status!.status, { Err: { InstructionError: [0, { Custom: 1 }] } });
  const tx = await call<{ meta: { fee: number; err: unknown; logMessages: string[] } }>('getTransaction', [signature, { commitment: 'confirmed' }]);
  t.equal(tx.meta.fee, 5000);
  t.ok(tx.meta.logMessages.some((l) => l.includes('failed')), 'the failure is in the logs');
  const after = await call<{ value: number }>('getBalance', [payer.publicKey.toBase58(), { commitment: 'processed' }]);
  t.equal(before.value - after.value, 5000, 'only the fee was taken');
});

t.test('a priority fee is charged, priced by getFeeForMessage and reported by getRecentPrioritizationFees', async (t) => {
  const tx = new Transaction().add(
    ComputeBudgetProgram.setComputeUnitLimit({ units: 10_000 }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000 }),
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(solana.getSeed().wallet.address), lamports: 1000 }),
  );
  const wire = signed(tx);
  const message = tx.serializeMessage().toString('base64');
  t.equal((await call<{ value: number }>('getFeeForMessage', [message, { commitment: 'processed' }])).value, 5000 + 10_000, '5,000 a signature plus price × limit');
  const signature = await call<string>('sendTransaction', [bs58.encode(wire)]);
  const slot = Number(node.slot('processed'));
  node.advance(1);
  const landed = await call<{ meta: { fee: number } }>('getTransaction', [signature, { commitment: 'confirmed' }]);
  t.equal(landed.meta.fee, 15_000);
  const fees = await call<Array<{ slot: number; prioritizationFee: number }>>('getRecentPrioritizationFees', [[payer.publicKey.toBase58()]]);
  t.same(fees.find((f) => f.slot === slot), { slot, prioritizationFee: 1_000_000 });
  t.ok(fees.filter((f) => f.slot !== slot).every((f) => f.prioritizationFee === 0), 'other blocks held no priced transaction of the payer');
});

t.test('a blockhash older than 150 blocks is invalid and refused by preflight', async (t) => {
  const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }));
  const wire = signed(tx);
  t.equal((await call<{ value: boolean }>('isBlockhashValid', [tx.recentBlockhash, { commitment: 'processed' }])).value, true);
  node.advance(151);
  t.equal((await call<{ value: boolean }>('isBlockhashValid', [tx.recentBlockhash, { commitment: 'processed' }])).value, false, 'older than 150 blocks');
  const refused = (await post(solana.url, rpc('sendTransaction', [wire.toString('base64'), { encoding: 'base64' }]))).json as { error: { code: number; message: string } };
  t.same([refused.error.code, refused.error.message], [-32002, 'Transaction simulation failed: Blockhash not found']);
});

t.test('a token transfer lists its token balances before and after', async (t) => {
  const seed = solana.getSeed();
  const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
  const source = Keypair.generate().publicKey.toBase58();
  const destination = Keypair.generate().publicKey.toBase58();
  const holder = Keypair.generate().publicKey.toBase58();
  const rent = node.rentExemptMinimum(165);
  node.setAccount(source, { lamports: rent, data: tokenAccountData(seed.mint.address, payer.publicKey.toBase58(), 1_000_000n), owner: TOKEN });
  node.setAccount(destination, { lamports: rent, data: tokenAccountData(seed.mint.address, holder, 0n), owner: TOKEN });
  const data = Buffer.alloc(9);
  data.writeUInt8(3, 0); // TokenInstruction::Transfer
  data.writeBigUInt64LE(250_000n, 1);
  const transfer = new TransactionInstruction({
    programId: new PublicKey(TOKEN),
    keys: [
      { pubkey: new PublicKey(source), isSigner: false, isWritable: true },
      { pubkey: new PublicKey(destination), isSigner: false, isWritable: true },
      { pubkey: payer.publicKey, isSigner: true, isWritable: false },
    ],
    data,
  });
  const signature = await call<string>('sendTransaction', [signed(new Transaction().add(transfer)).toString('base64'), { encoding: 'base64' }]);
  node.advance(1);
  const landed = await call<{ meta: { err: unknown; preTokenBalances: unknown[]; postTokenBalances: unknown[] }; transaction: { message: { accountKeys: string[] } } }>('getTransaction', [signature, { commitment: 'confirmed' }]);
  t.equal(landed.meta.err, null);
  const keys = landed.transaction.message.accountKeys;
  const balance = (account: string, owner: string, amount: string, uiAmount: number) => ({
    accountIndex: keys.indexOf(account), mint: seed.mint.address, uiTokenAmount: { uiAmount, decimals: 6, amount, uiAmountString: String(uiAmount) }, owner, programId: TOKEN,
  });
  t.same(landed.meta.preTokenBalances, [balance(source, payer.publicKey.toBase58(), '1000000', 1), balance(destination, holder, '0', 0)].sort((a, b) => a.accountIndex - b.accountIndex));
  t.same(landed.meta.postTokenBalances, [balance(source, payer.publicKey.toBase58(), '750000', 0.75), balance(destination, holder, '250000', 0.25)].sort((a, b) => a.accountIndex - b.accountIndex));
});

t.test('two nodes started alike and given the same steps hold the same ledger', async (t) => {
  const now = (): number => Date.UTC(2026, 0, 1);
  const [a, b] = await Promise.all([startLiteSvmInstance('litesvm#a', { slotMs: 0, now }), startLiteSvmInstance('litesvm#b', { slotMs: 0, now })]);
  t.teardown(async () => { await a.stop(); await b.stop(); });
  const both = async (method: string, params: unknown[]): Promise<string[]> =>
    Promise.all([a, b].map(async (n) => (await post(n.url, rpc(method, params))).text));
  for (const n of [a, b]) n.node.advance(2);
  const [sigA, sigB] = await both('requestAirdrop', [payer.publicKey.toBase58(), 5_000_000]);
  t.equal(sigA, sigB, 'the same airdrop transaction');
  for (const n of [a, b]) n.node.advance(1);
  const [blockA, blockB] = await both('getBlock', [2, { commitment: 'confirmed' }]);
  t.equal(blockA, blockB);
  t.match(blockA, /"signatures":\["/);
});
