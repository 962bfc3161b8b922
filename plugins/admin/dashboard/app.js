// The dashboard: signs in through a form (the server sets an HttpOnly session cookie), then reads and
// changes everything through the admin API. Values from the API are put in the page as text, never as
// markup.
import { api, signedIn } from './api.js';
import { callsAndCredits, parts, series } from './charts.js';

const $ = (id) => document.getElementById(id);
const state = { keys: [], plans: {}, selected: undefined };
const DAY_MS = 86_400_000;
const isoDay = (ms) => new Date(ms).toISOString().slice(0, 10);

function show(id, visible) {
  $(id).hidden = !visible;
}

function notice(message, isError = false) {
  const el = $('notice');
  el.textContent = message;
  el.classList.toggle('error', isError);
  el.hidden = message === '';
}

const fmt = (n) => (typeof n === 'number' ? n.toLocaleString('en') : String(n));

function cell(row, value, numeric = false) {
  const td = document.createElement('td');
  td.textContent = value === null || value === undefined ? '–' : numeric ? fmt(value) : String(value);
  if (numeric) td.className = 'num';
  row.append(td);
  return td;
}

function fillTable(id, rows, render) {
  const body = $(id).tBodies[0];
  body.replaceChildren();
  for (const item of rows) {
    const tr = document.createElement('tr');
    render(tr, item);
    body.append(tr);
  }
}

async function loadUpstreams() {
  const { upstreams } = await api('/upstreams');
  fillTable('upstreams', upstreams, (tr, u) => {
    const d = u.details ?? {};
    cell(tr, u.network);
    cell(tr, u.name);
    cell(tr, u.role);
    const health = cell(tr, u.healthy ? 'healthy' : 'unhealthy');
    health.className = u.healthy ? 'healthy' : 'unhealthy';
    cell(tr, d.breaker?.state);
    cell(tr, d.head, true);
    cell(tr, d.lag, true);
    cell(tr, d.latencyMs, true);
    cell(tr, u.inFlight, true);
  });
}

function planOptions(select, current) {
  select.replaceChildren();
  for (const name of Object.keys(state.plans)) {
    const option = document.createElement('option');
    option.value = name;
    option.textContent = `${name} (${state.plans[name].dailyCredits.toLocaleString('en')} credits/day)`;
    option.selected = name === current;
    select.append(option);
  }
}

async function loadKeys() {
  const [{ keys }, { plans }] = await Promise.all([api('/keys'), api('/plans')]);
  state.keys = keys;
  state.plans = plans;
  planOptions($('create-plan'), 'growth');
  fillTable('keys', keys, (tr, k) => {
    tr.className = 'selectable';
    tr.dataset.id = k.id;
    if (k.id === state.selected) tr.classList.add('selected');
    cell(tr, k.id);
    cell(tr, k.label ?? '');
    cell(tr, k.plan);
    cell(tr, k.keyHint === '' ? '' : `…${k.keyHint}`);
    cell(tr, k.source);
    cell(tr, k.revokedAt === undefined ? 'active' : 'revoked');
    tr.addEventListener('click', () => void select(k.id));
  });
}

function range() {
  return { from: $('from').value, to: $('to').value };
}

async function loadDetail() {
  const id = state.selected;
  if (id === undefined) return;
  const { from, to } = range();
  const q = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
  const [{ key, balance, storage }, { days }, traffic, paid] = await Promise.all([
    api(`/keys/${encodeURIComponent(id)}`),
    api(`/keys/${encodeURIComponent(id)}/usage?${q}`),
    api(`/keys/${encodeURIComponent(id)}/traffic?${q}`),
    api(`/keys/${encodeURIComponent(id)}/payments`),
  ]);
  $('detail-id').textContent = key.id;
  $('used-today').textContent = fmt(balance.used);
  $('daily-credits').textContent = fmt(balance.dailyCredits);
  $('remaining-today').textContent = fmt(balance.remaining);
  $('resets-at').textContent = balance.resetsAt;
  $('paid-remaining').textContent = fmt(balance.paidRemaining ?? 0);
  parts('chart-balance', ['Used', 'Remaining'], [balance.used, balance.remaining]);

  $('stored-bytes').textContent = fmt(storage.bytes);
  $('stored-pins').textContent = fmt(storage.pins);
  $('storage-limit').textContent = storage.limitBytes === undefined ? 'no limit on its plan' : `its plan allows ${fmt(storage.limitBytes)} bytes`;

  // The x402 payments that bought the key credits, newest first (a gateway without the payments plugin: no tile).
  show('payments-tile', paid.takesPayments);
  show('payments-none', paid.payments.length === 0);
  fillTable('payments', paid.payments, (tr, p) => {
    tr.dataset.payment = p.id;
    cell(tr, p.startedAt);
    const state = cell(tr, p.state);
    state.className = `pay-${p.state}`;
    cell(tr, p.credits, true);
    cell(tr, `${p.amount} ${p.asset.slice(0, 10)}…`);
    cell(tr, p.payer);
    cell(tr, p.transaction ?? p.failure);
  });

  series('chart-days', days.map((d) => d.day), 'Credits', days.map((d) => d.total.credits));

  const methods = new Map();
  for (const day of days) {
    for (const [name, t] of Object.entries(day.methods)) {
      const sum = methods.get(name) ?? { calls: 0, credits: 0, failed: 0 };
      sum.calls += t.calls;
      sum.credits += t.credits;
      sum.failed += t.failed;
      methods.set(name, sum);
    }
  }
  const methodRows = [...methods].sort((a, b) => b[1].credits - a[1].credits || a[0].localeCompare(b[0]));
  callsAndCredits('chart-methods', methodRows.map(([m]) => m), methodRows.map(([, t]) => t.calls), methodRows.map(([, t]) => t.credits));
  fillTable('methods', methodRows, (tr, [name, t]) => {
    tr.dataset.method = name;
    cell(tr, name);
    cell(tr, t.calls, true);
    cell(tr, t.credits, true);
    cell(tr, t.failed, true);
  });

  const networkRows = Object.entries(traffic.networks).sort((a, b) => a[0].localeCompare(b[0]));
  callsAndCredits('chart-networks', networkRows.map(([n]) => n), networkRows.map(([, t]) => t.calls), networkRows.map(([, t]) => t.credits));
  fillTable('networks', networkRows, (tr, [name, t]) => {
    tr.dataset.network = name;
    cell(tr, name);
    cell(tr, t.calls, true);
    cell(tr, t.credits, true);
  });
  const outcomeRows = Object.entries(traffic.outcomes).sort((a, b) => a[0].localeCompare(b[0]));
  parts('chart-outcomes', outcomeRows.map(([o]) => o), outcomeRows.map(([, n]) => n));
  fillTable('outcomes', outcomeRows, (tr, [outcome, n]) => {
    tr.dataset.outcome = outcome;
    cell(tr, outcome);
    cell(tr, n, true);
  });
  $('traffic-since').textContent = traffic.since;

  const managed = key.source === 'store';
  show('manage', managed && key.revokedAt === undefined);
  show('readonly', !managed);
  planOptions($('plan'), key.plan);
  $('security').value = JSON.stringify(key.settings?.security ?? {}, null, 2);
  show('revoke-confirm', false);
}

async function select(id) {
  state.selected = id;
  for (const tr of $('keys').tBodies[0].rows) tr.classList.toggle('selected', tr.dataset.id === id);
  show('detail', true);
  await run(loadDetail);
}

/** Runs an action, showing its failure instead of throwing. */
async function run(action, done) {
  try {
    await action();
    if (done !== undefined) notice(done);
  } catch (error) {
    notice(error.message, true);
  }
}

function showIssued(issued) {
  $('issued-id').textContent = issued.key.id;
  $('issued-key').textContent = issued.apiKey;
  $('issued-secret').textContent = issued.secret;
  show('issued', true);
}

function wire() {
  $('create').addEventListener('submit', (event) => {
    event.preventDefault();
    const body = { plan: $('create-plan').value };
    if ($('create-id').value !== '') body.id = $('create-id').value;
    if ($('create-label').value !== '') body.label = $('create-label').value;
    void run(async () => {
      const issued = await api('/keys', { method: 'POST', body });
      showIssued(issued);
      $('create').reset();
      await loadKeys();
      await select(issued.key.id);
    }, 'Key created.');
  });
  $('plan-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void run(async () => {
      await api(`/keys/${encodeURIComponent(state.selected)}`, { method: 'PATCH', body: { plan: $('plan').value } });
      await loadKeys();
      await loadDetail();
    }, 'Plan changed.');
  });
  $('rotate').addEventListener('click', () => {
    void run(async () => {
      showIssued(await api(`/keys/${encodeURIComponent(state.selected)}/rotate`, { method: 'POST' }));
      await loadKeys();
    }, 'Key rotated: the old API key and secret no longer work.');
  });
  $('revoke').addEventListener('click', () => show('revoke-confirm', true));
  $('revoke-confirm').addEventListener('click', () => {
    void run(async () => {
      await api(`/keys/${encodeURIComponent(state.selected)}/revoke`, { method: 'POST' });
      await loadKeys();
      await loadDetail();
    }, 'Key revoked.');
  });
  $('security-form').addEventListener('submit', (event) => {
    event.preventDefault();
    let value;
    try {
      value = JSON.parse($('security').value || '{}');
    } catch (error) {
      notice(`Security settings: not JSON (${error.message})`, true);
      return;
    }
    void run(async () => {
      const id = encodeURIComponent(state.selected);
      const empty = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
      if (!empty) {
        // Checked first, so a mistake is shown with every problem rather than sent to be refused.
        const { problems } = await api(`/keys/${id}/settings/security/check`, { method: 'POST', body: value });
        if (problems.length > 0) {
          notice(`Security settings not saved: ${problems.join('; ')}`, true);
          return;
        }
      }
      await api(`/keys/${id}/settings/security`, empty ? { method: 'DELETE' } : { method: 'PUT', body: value });
      await loadKeys();
      notice('Security settings saved.');
    });
  });
  $('refresh').addEventListener('click', () => void run(async () => {
    await loadUpstreams();
    await loadKeys();
    await loadDetail();
  }));
}

async function start() {
  const today = Date.now();
  $('to').value = isoDay(today);
  $('from').value = isoDay(today - 6 * DAY_MS);
  if (!(await signedIn())) {
    show('signin', true);
    show('signin-error', new URLSearchParams(location.search).get('signin') === 'failed');
    $('token').focus();
    return;
  }
  if (location.search !== '') history.replaceState(null, '', location.pathname);
  show('signout', true);
  show('app', true);
  wire();
  await run(async () => {
    await Promise.all([loadUpstreams(), loadKeys()]);
    const first = state.keys.find((k) => k.revokedAt === undefined);
    if (first !== undefined) await select(first.id);
  });
}

void start();
