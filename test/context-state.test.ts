import t from 'tap';
import { ContextKey, ContextState, keyOf, methodOf, planOf, replyOf, servedByOf, type RequestContext } from '../core/plugin-api.js';
import { Errors, GatewayError } from '../core/index.js';
import { candidatesOf } from '../core/context/context-access.js';

// A context key is written once: a second plugin (or a stage run twice) cannot silently overwrite it.

const OWNER = new ContextKey<string>('test.owner');

t.test('set refuses a key that holds a value, with a coded error; replace overwrites on purpose', async (t) => {
  const state = new ContextState();
  state.set(OWNER, 'first');
  const error = t.throws(() => state.set(OWNER, 'second')) as GatewayError;
  t.ok(error instanceof GatewayError);
  t.equal(error.entry, Errors.STAGE_CONTRACT_VIOLATED);
  t.match(error.message, /context key "test\.owner" already holds a value/);
  t.equal(state.get(OWNER), 'first', 'the first value is kept');
  state.replace(OWNER, 'second');
  t.equal(state.get(OWNER), 'second');
});

t.test('a key set to undefined still counts as set', async (t) => {
  const state = new ContextState();
  const MAYBE = new ContextKey<string | undefined>('test.maybe');
  state.set(MAYBE, undefined);
  t.ok(state.has(MAYBE));
  t.throws(() => state.set(MAYBE, 'late'));
});

t.test('a field read before the stage that sets it is a coded error naming both', async (t) => {
  const early = { key: undefined, plan: undefined, method: undefined, candidates: undefined, reply: undefined, servedBy: undefined } as unknown as RequestContext;
  const reads: Array<[string, () => unknown, RegExp]> = [
    ['keyOf', () => keyOf(early), /ctx\.key was read before the authenticate stage/],
    ['planOf', () => planOf(early), /ctx\.plan was read before the authenticate stage/],
    ['methodOf', () => methodOf(early), /ctx\.method was read before the validate stage/],
    ['candidatesOf', () => candidatesOf(early), /ctx\.candidates was read before the route stage/],
    ['replyOf', () => replyOf(early), /ctx\.reply was read before the dispatch stage/],
    ['servedByOf', () => servedByOf(early), /ctx\.servedBy was read before the dispatch stage/],
  ];
  for (const [name, read, message] of reads) {
    const error = t.throws(read, name) as GatewayError;
    t.equal(error.entry, Errors.STAGE_CONTRACT_VIOLATED, name);
    t.match(error.message, message, name);
  }
  const key = { id: 'k', plan: 'core' };
  t.equal(keyOf({ key } as unknown as RequestContext), key, 'a set field is returned as is');
});
