import t from 'tap';
import { of } from 'rxjs';
import { pino } from 'pino';
import { settleCall, step } from '../core/plugin-api.js';
import { CancelToken } from '../core/context/cancel-signal.js';
import type { ContextInit } from '../core/transport-api.js';
import type { Network } from '../core/plugin-api.js';
import { CallContext } from '../core/context/call-context.js';

// A call's cancellation is a small token, not an AbortController per call; it must still behave like
// the part of an AbortSignal that requests use, and ctx.signal must follow it.

t.test('a token calls each listener once, in order, and forgets removed ones', async (t) => {
  const token = new CancelToken();
  const seen: string[] = [];
  const a = (): void => void seen.push('a');
  const b = (): void => void seen.push('b');
  const c = (): void => void seen.push('c');
  token.addEventListener('abort', a);
  token.addEventListener('abort', b);
  token.addEventListener('abort', c);
  token.removeEventListener('abort', b);
  t.equal(token.aborted, false);
  t.equal(token.reason, undefined);
  const reason = new Error('gone');
  token.abort(reason);
  token.abort(new Error('again'));
  t.same(seen, ['a', 'c']);
  t.equal(token.aborted, true);
  t.equal(token.reason, reason, 'the first reason stays');
  token.addEventListener('abort', a);
  t.same(seen, ['a', 'c'], 'a listener added after the abort is never called, as with an AbortSignal');
});

t.test('a single listener can be removed, and a throwing listener does not stop the others', async (t) => {
  const token = new CancelToken();
  const lone = (): void => void t.fail('removed listener called');
  token.addEventListener('abort', lone);
  token.removeEventListener('abort', lone);
  token.abort('x');

  const other = new CancelToken();
  let after = false;
  other.addEventListener('abort', () => {
    throw new Error('listener failed');
  });
  other.addEventListener('abort', () => void (after = true));
  const thrown = new Promise<unknown>((resolve) => process.once('uncaughtException', resolve));
  other.abort('y');
  t.equal(after, true);
  t.match(await thrown, { message: 'listener failed' }, 'the error surfaces, as an EventTarget listener error does');
});

const network = { name: 'n', families: [] } as unknown as Network;
const init = (signal?: AbortSignal): ContextInit => ({ transport: 't', network, credentials: { apiKey: 'k' }, call: { method: 'm', params: [], id: 1, raw: undefined }, ...(signal === undefined ? {} : { signal }) });

t.test('ctx.signal is made on first read and follows the call cancellation, before or after it', async (t) => {
  const early = new CallContext(init(), 0);
  const signal = early.signal;
  t.equal(early.signal, signal, 'one signal per call');
  t.equal(signal.aborted, false);
  early.cancel('stop');
  t.equal(signal.aborted, true);
  t.equal(signal.reason, 'stop');
  t.equal(early.cancelSignal.aborted, true);

  const late = new CallContext(init(), 0);
  late.cancel();
  t.equal(late.signal.aborted, true, 'a signal read after the cancellation is already aborted');
  t.match(late.signal.reason, { message: 'call cancelled' });
});

t.test('a context given an outer signal is cancelled with it, and lets go of it when cancelled otherwise', async (t) => {
  const outer = new AbortController();
  const ctx = new CallContext(init(outer.signal), 0);
  outer.abort('outer reason');
  t.equal(ctx.cancelSignal.aborted, true);
  t.equal(ctx.cancelSignal.reason, 'outer reason');

  const aborted = new AbortController();
  aborted.abort('before');
  t.equal(new CallContext(init(aborted.signal), 0).cancelSignal.reason, 'before', 'an outer signal aborted already cancels at once');

  const kept = new AbortController();
  const other = new CallContext(init(kept.signal), 0);
  other.cancel('own');
  kept.abort('later');
  t.equal(other.cancelSignal.reason, 'own', 'the outer abort after the call was cancelled changes nothing');
});

// The same cancellation in the operator form of the stages, composed with plain RxJS and settleCall.
t.test('composed stages: a step does not run on a cancelled call; unsubscribing waits for a pending step, then compensates once', async (t) => {
  const finished: CallContext[] = [];
  const settlement = { logger: pino({ level: 'silent' }), finishCall: (ctx: unknown) => void finished.push(ctx as CallContext) };

  const ran: string[] = [];
  const cancelled = new CallContext(init(), 0);
  cancelled.cancel('gone');
  const first = of(cancelled).pipe(step(() => void ran.push('first')));
  first.subscribe({ error: (error: unknown) => void ran.push(`error: ${(error as Error).message}`) });
  t.same(ran, ['error: the client went away'], 'the step did not run; the call fails at its boundary');

  let release: () => void = () => {};
  let refunds = 0;
  const ctx = new CallContext(init(), 0);
  const debit = step((c) => new Promise<void>((resolve) => {
    release = () => {
      c.compensations.push(() => void refunds++);
      resolve();
    };
  }));
  const after = step(() => void ran.push('after'));
  const subscription = of(ctx).pipe(debit, after, settleCall(ctx, settlement)).subscribe();
  subscription.unsubscribe();
  t.equal(ctx.cancelSignal.aborted, true, 'unsubscribing cancels the call');
  t.same(finished, [], 'the pending step is waited for');
  release();
  await new Promise<void>((resolve) => setImmediate(resolve));
  t.same(finished, [ctx], 'finished once');
  t.equal(refunds, 1, 'the compensation the pending step registered ran once');
  t.notOk(ran.includes('after'), 'no later stage ran');
  t.match(ctx.error, { message: 'the client went away' });
});
