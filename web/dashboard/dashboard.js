// The CoinWatch dashboard: live prices, a device's thresholds and its alerts, over the Connect protocol.
//
// Plain JavaScript served by coinwatchd itself; nothing is fetched from elsewhere. Prices and thresholds are
// exact decimals ({mantissa, scale} on the wire); they are shown, compared and drawn with BigInt arithmetic,
// never as binary floats.
'use strict';

const SERVICE = '/coinwatch.v1.CoinWatch/';
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
const SPARK_POINTS = 60;
const SPARK_WIDTH = 120;
const SPARK_HEIGHT = 28;
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 8000;
const SETTINGS_POLL_MS = 3000;

// ---------------------------------------------------------------------------------------------------------
// Exact decimals

/** {mantissa: "642505", scale: 1} (JSON; both fields may be absent) as {m: 642505n, s: 1}. */
function decimalFromJSON(d) {
  if (!d) return null;
  return { m: BigInt(d.mantissa || '0'), s: Number(d.scale || 0) };
}

/** Both values at the larger scale: [a', b', scale]. */
function aligned(a, b) {
  const s = Math.max(a.s, b.s);
  return [a.m * 10n ** BigInt(s - a.s), b.m * 10n ** BigInt(s - b.s), s];
}

function decimalEquals(a, b) {
  if (!a || !b) return a === b;
  const [x, y] = aligned(a, b);
  return x === y;
}

/** "64,250.5": every digit kept, the integer part grouped by thousands. */
function formatDecimal(d) {
  if (!d) return '';
  const negative = d.m < 0n;
  let digits = (negative ? -d.m : d.m).toString();
  if (d.s > 0) digits = digits.padStart(d.s + 1, '0');
  const whole = d.s > 0 ? digits.slice(0, digits.length - d.s) : digits;
  const fraction = d.s > 0 ? digits.slice(digits.length - d.s) : '';
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return (negative ? '-' : '') + grouped + (fraction ? '.' + fraction : '');
}

/** The same without grouping, as typed into a threshold field. */
function plainDecimal(d) {
  return d ? formatDecimal(d).replace(/,/g, '') : '';
}

const INT64_MAX = (1n << 63n) - 1n;

/** Parses a threshold as typed ("60000", "0.000123"); null for empty; throws with a reason otherwise. */
function parseDecimal(text) {
  const t = text.trim().replace(/,/g, '');
  if (t === '') return null;
  const match = /^(\d+)(?:\.(\d+))?$/.exec(t);
  if (!match) throw new Error(`"${text.trim()}" is not a positive decimal number`);
  let fraction = (match[2] || '').replace(/0+$/, '');
  if (fraction.length > 18) throw new Error(`"${text.trim()}" has more than 18 digits after the point`);
  const m = BigInt(match[1] + fraction);
  if (m > INT64_MAX) throw new Error(`"${text.trim()}" is too large`);
  if (m === 0n) return null;
  return { m, s: fraction.length };
}

function decimalToJSON(d) {
  const out = { mantissa: d.m.toString() };
  if (d.s) out.scale = d.s;
  return out;
}

/** Change from `open` to `now` as "+1.23%", rounded half away from zero, computed in hundredths of a percent. */
function percentChange(open, now) {
  if (!open || !now || open.m === 0n) return { text: '', sign: 0 };
  const [o, n] = aligned(open, now);
  const diff = n - o;
  const scaled = diff * 20000n / (o < 0n ? -o : o);  // twice the hundredths, for rounding
  const hundredths = (scaled + (scaled >= 0n ? 1n : -1n)) / 2n;
  const sign = hundredths > 0n ? 1 : hundredths < 0n ? -1 : 0;
  const abs = hundredths < 0n ? -hundredths : hundredths;
  const text = (sign > 0 ? '+' : sign < 0 ? '−' : '') + (abs / 100n).toString() + '.' +
    (abs % 100n).toString().padStart(2, '0') + '%';
  return { text, sign };
}

// ---------------------------------------------------------------------------------------------------------
// The Connect protocol (connectrpc.com), JSON codec

class ConnectError extends Error {
  constructor(code, message) {
    super(message || code);
    this.code = code;
  }
}

// The code of an error answer without a Connect body (a proxy's, say): the specification's HTTP-to-code table.
const HTTP_TO_CODE = { 400: 'internal', 401: 'unauthenticated', 403: 'permission_denied', 404: 'unimplemented',
  429: 'unavailable', 502: 'unavailable', 503: 'unavailable', 504: 'unavailable' };

function headers(contentType, timeoutMs) {
  const h = { 'Content-Type': contentType, 'Connect-Protocol-Version': '1' };
  if (timeoutMs) h['Connect-Timeout-Ms'] = String(timeoutMs);
  return h;
}

async function errorFromResponse(response) {
  let body = null;
  try { body = await response.json(); } catch (_) { /* not JSON: use the status */ }
  const code = (body && body.code) || HTTP_TO_CODE[response.status] || 'unknown';
  return new ConnectError(code, (body && body.message) || `HTTP ${response.status}`);
}

/** A unary call: POST with a JSON body; the answer or a ConnectError. */
async function unary(method, request, { signal, timeoutMs = 10000 } = {}) {
  let response;
  try {
    response = await fetch(SERVICE + method, {
      method: 'POST', headers: headers('application/json', timeoutMs), body: JSON.stringify(request), signal,
    });
  } catch (e) {
    if (signal && signal.aborted) throw e;
    throw new ConnectError('unavailable', 'cannot reach the server');
  }
  if (!response.ok) throw await errorFromResponse(response);
  return response.json();
}

/**
 * A server stream: calls `onMessage` with each message; resolves when the stream ends cleanly, rejects with a
 * ConnectError for an error end, a cut connection or a stream that stops without its end-of-stream message.
 */
async function serverStream(method, request, onMessage, signal) {
  const payload = new TextEncoder().encode(JSON.stringify(request));
  const body = new Uint8Array(5 + payload.length);
  new DataView(body.buffer).setUint32(1, payload.length);
  body.set(payload, 5);
  let response;
  try {
    response = await fetch(SERVICE + method, {
      method: 'POST', headers: headers('application/connect+json'), body, signal,
    });
  } catch (e) {
    if (signal.aborted) throw e;
    throw new ConnectError('unavailable', 'cannot reach the server');
  }
  if (!response.ok || !response.body) throw await errorFromResponse(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let buffer = new Uint8Array(0);
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (e) {
      if (signal.aborted) throw e;
      throw new ConnectError('unavailable', 'the connection was cut');
    }
    if (chunk.done) throw new ConnectError('unavailable', 'the stream ended without its end message');
    const joined = new Uint8Array(buffer.length + chunk.value.length);
    joined.set(buffer);
    joined.set(chunk.value, buffer.length);
    buffer = joined;
    while (buffer.length >= 5) {
      const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
      const flags = view.getUint8(0);
      const length = view.getUint32(1);
      if (length > MAX_MESSAGE_BYTES) throw new ConnectError('resource_exhausted', 'message too large');
      if (buffer.length < 5 + length) break;
      const json = JSON.parse(decoder.decode(buffer.subarray(5, 5 + length)));
      buffer = buffer.slice(5 + length);
      if (flags & 0x02) {
        reader.cancel().catch(() => {});
        if (json.error) throw new ConnectError(json.error.code || 'unknown', json.error.message);
        return;
      }
      if (flags & 0x01) throw new ConnectError('internal', 'compressed messages are not supported');
      onMessage(json);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// A stream that stays open: reconnects with exponential backoff, and reports its state

/** The wait before attempt `n` (1-based): 0.5 s doubling to 8 s, with ±20% jitter so tabs do not align. */
function backoffDelay(attempt) {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.min(attempt - 1, 10));
  return Math.round(base * (0.8 + 0.4 * Math.random()));
}

class LiveStream {
  /**
   * `open(signal, onMessage)` runs one stream to its end; `onState(state, detail)` hears
   * 'connecting' | 'live' | 'reconnecting' | 'offline' | 'stopped'.
   */
  constructor(open, onMessage, onState) {
    this.open = open;
    this.onMessage = onMessage;
    this.onState = onState;
    this.controller = null;
    this.wake = null;
    this.stopped = false;
    this.lastState = null;
    this.onOnline = () => this.retryNow();
    window.addEventListener('online', this.onOnline);
  }

  start() {
    this.run();
  }

  stop() {
    this.stopped = true;
    window.removeEventListener('online', this.onOnline);
    if (this.controller) this.controller.abort();
    if (this.wake) this.wake();
    this.onState('stopped');
  }

  retryNow() {
    if (this.wake) this.wake();
  }

  async run() {
    let attempt = 0;
    while (!this.stopped) {
      // At most one stream at a time: the previous one is over (or aborted) before the next starts.
      this.controller = new AbortController();
      const signal = this.controller.signal;
      this.onState(attempt === 0 ? 'connecting' : 'reconnecting', { attempt, waiting: false });
      let error = null;
      try {
        await this.open(signal, (message) => {
          if (attempt !== 0 || this.lastState !== 'live') {
            attempt = 0;
            this.setLive();
          }
          this.onMessage(message);
        });
        error = new ConnectError('unavailable', 'the server ended the stream');
      } catch (e) {
        error = e;
      }
      if (this.stopped) return;
      attempt += 1;
      if (!navigator.onLine) {
        this.lastState = 'offline';
        this.onState('offline', { error });
        await new Promise((resolve) => { this.wake = resolve; });
        this.wake = null;
        continue;
      }
      const delay = backoffDelay(attempt);
      this.lastState = 'reconnecting';
      this.onState('reconnecting', { attempt, delay, error, waiting: true, until: Date.now() + delay });
      await new Promise((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, delay);
      });
      this.wake = null;
    }
  }

  setLive() {
    this.lastState = 'live';
    this.onState('live');
  }
}

// ---------------------------------------------------------------------------------------------------------
// Prices

const $ = (id) => document.getElementById(id);

const prices = new Map();  // symbol -> {row, price, time, stale, points: [{d, t}], open}
let streamSequence = 0n;

function todayKey() {
  return 'coinwatch.open.' + new Date().toISOString().slice(0, 10);
}

function loadOpens() {
  try { return JSON.parse(localStorage.getItem(todayKey()) || '{}'); } catch (_) { return {}; }
}

const opens = loadOpens();

function rememberOpen(symbol, price) {
  if (opens[symbol]) return decimalFromJSON(opens[symbol]);
  opens[symbol] = decimalToJSON(price);
  try { localStorage.setItem(todayKey(), JSON.stringify(opens)); } catch (_) { /* private mode: this page only */ }
  return price;
}

function timeText(ms) {
  if (!ms) return '';
  return new Date(Number(ms)).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

function rowFor(symbol) {
  let entry = prices.get(symbol);
  if (entry) return entry;
  const row = document.createElement('tr');
  row.dataset.symbol = symbol;
  row.innerHTML = '<th scope="row" class="sym"></th><td class="num price-cell"><span class="price"></span></td>' +
    '<td class="num change"></td><td class="trend"></td><td class="time"></td>';
  row.querySelector('.sym').textContent = symbol;
  entry = { row, price: null, time: 0, stale: false, points: [], open: null, update: null };
  prices.set(symbol, entry);
  // Rows stay sorted by symbol, and there is exactly one per symbol whatever the stream resends.
  const rows = $('price-rows');
  const after = [...rows.children].find((r) => r.dataset.symbol > symbol);
  rows.insertBefore(row, after || null);
  $('no-prices').hidden = true;
  return entry;
}

function sparkline(symbol, points) {
  const svgNS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(svgNS, 'svg');
  svg.setAttribute('class', 'spark');
  svg.setAttribute('viewBox', `0 0 ${SPARK_WIDTH} ${SPARK_HEIGHT}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('role', 'img');
  const first = points[0].d;
  const last = points[points.length - 1].d;
  svg.setAttribute('aria-label', `${symbol} trend over ${points.length} prices, from ${formatDecimal(first)} to ${formatDecimal(last)}`);
  if (points.length > 1) {
    // Integer pixel positions from exact values: no float ever holds a price.
    const scale = points.reduce((s, p) => Math.max(s, p.d.s), 0);
    const values = points.map((p) => p.d.m * 10n ** BigInt(scale - p.d.s));
    let min = values[0];
    let max = values[0];
    for (const v of values) { if (v < min) min = v; if (v > max) max = v; }
    const span = max - min;
    const h = BigInt(SPARK_HEIGHT - 2);
    const coords = values.map((v, i) => {
      const x = Math.round(i * SPARK_WIDTH / (values.length - 1));
      const y = span === 0n ? SPARK_HEIGHT / 2 : 1 + Number(h - (v - min) * h / span);
      return `${x},${y}`;
    });
    const line = document.createElementNS(svgNS, 'polyline');
    line.setAttribute('points', coords.join(' '));
    svg.appendChild(line);
  }
  return svg;
}

/** A message of this tab's own stream: its sequence number is checked, then it is shown (and shared). */
function applyPrice(update) {
  const sequence = BigInt(update.sequence || '0');
  // Sequence numbers count 1, 2, 3… within a stream; anything else means a lost or repeated message.
  if (sequence !== streamSequence + 1n) {
    throw new ConnectError('data_loss', `stream sequence ${sequence} after ${streamSequence}`);
  }
  streamSequence = sequence;
  showPrice(update);
  if (sharing.channel) sharing.channel.postMessage({ type: 'update', update });
}

function showPrice(update) {
  if (!update.symbol || !update.price) return;
  const entry = rowFor(update.symbol);
  entry.update = update;
  const price = decimalFromJSON(update.price);
  const time = Number(update.sourceTimeMs || '0');
  const stale = update.stale === true;  // absent on servers without the flag: not stale
  const last = entry.points[entry.points.length - 1];
  // A reconnect's snapshot repeats the last price seen: it changes nothing, so no duplicate point.
  if (!last || last.t !== time || !decimalEquals(last.d, price)) {
    entry.points.push({ d: price, t: time });
    if (entry.points.length > SPARK_POINTS) entry.points.shift();
  }
  if (!entry.open) entry.open = rememberOpen(update.symbol, price);
  const previous = entry.price;
  entry.price = price;
  entry.time = time;
  entry.stale = stale;
  renderRow(update.symbol, entry, previous);
}

function renderRow(symbol, entry, previous) {
  const row = entry.row;
  const priceCell = row.querySelector('.price');
  priceCell.textContent = formatDecimal(entry.price);
  if (previous && !decimalEquals(previous, entry.price)) {
    const [p, n] = aligned(previous, entry.price);
    priceCell.className = 'price ' + (n > p ? 'up' : 'down');
  }
  const change = percentChange(entry.open, entry.price);
  const changeCell = row.querySelector('.change');
  changeCell.textContent = change.text;
  changeCell.className = 'num change' + (change.sign > 0 ? ' up' : change.sign < 0 ? ' down' : '');
  changeCell.setAttribute('aria-label', change.text ? `change ${change.text} since today's first price` : '');
  row.querySelector('.trend').replaceChildren(sparkline(symbol, entry.points));
  const timeCell = row.querySelector('.time');
  timeCell.textContent = timeText(entry.time);
  row.classList.toggle('stale', entry.stale);
  const symbolCell = row.querySelector('.sym');
  let badge = symbolCell.querySelector('.badge');
  if (entry.stale && !badge) {
    badge = document.createElement('span');
    badge.className = 'badge';
    badge.textContent = 'STALE';
    badge.title = 'The feed for this symbol is stale: the price may be out of date';
    badge.setAttribute('aria-label', 'stale: the price may be out of date');
    symbolCell.appendChild(badge);
  } else if (!entry.stale && badge) {
    badge.remove();
  }
}

function showConnection(state, detail = {}) {
  const element = $('connection');
  const text = $('connection-text');
  element.dataset.state = state;
  document.body.dataset.connection = state;
  $('retry').hidden = state !== 'reconnecting';
  clearInterval(showConnection.timer);
  if (state === 'live') {
    text.textContent = 'Live';
  } else if (state === 'connecting') {
    text.textContent = 'Connecting…';
  } else if (state === 'offline') {
    text.textContent = 'Offline — waiting for the network';
  } else if (state === 'reconnecting') {
    const render = () => {
      if (!detail.waiting) {
        text.textContent = `Reconnecting… (attempt ${detail.attempt})`;
        return;
      }
      const left = Math.max(0, Math.ceil((detail.until - Date.now()) / 1000));
      text.textContent = `Reconnecting in ${left} s (attempt ${detail.attempt})`;
    };
    render();
    if (detail.waiting) showConnection.timer = setInterval(render, 250);
  }
}

const priceStream = new LiveStream(
  (signal, onMessage) => {
    streamSequence = 0n;
    // One stream for every symbol: the snapshot first, then each change.
    return serverStream('StreamPrices', {}, onMessage, signal);
  },
  (message) => {
    try {
      applyPrice(message);
    } catch (e) {
      // A sequence break: drop this stream and start a new one, whose snapshot restores every row.
      priceStream.controller.abort();
    }
  },
  (state, detail = {}) => {
    showConnection(state, detail);
    if (sharing.channel) {
      const { attempt, waiting, until } = detail;
      sharing.channel.postMessage({ type: 'state', state, detail: { attempt, waiting, until } });
    }
  },
);

// One price stream per browser, not per tab: browsers allow 6 HTTP/1.1 connections per origin across all tabs,
// and every tab streaming its own copy of the same prices would use them up. The tab holding the Web Lock
// streams and shares each update and state over a BroadcastChannel; the others show what it shares, and the
// next one takes over (with a fresh snapshot from the server) when it closes. Without those APIs (an insecure
// origin, an old browser), each tab streams for itself.
const sharing = {
  channel: null,
  leader: false,
};

function startPrices() {
  if (!('BroadcastChannel' in window) || !navigator.locks) {
    priceStream.start();
    return;
  }
  sharing.channel = new BroadcastChannel('coinwatch.prices');
  sharing.channel.onmessage = (event) => {
    const message = event.data || {};
    if (message.type === 'retry' && sharing.leader) {
      priceStream.retryNow();
    } else if (message.type === 'hello' && sharing.leader) {
      // A new tab: everything it needs to catch up, then live updates as they come.
      const updates = [...prices.values()].map((entry) => entry.update).filter(Boolean);
      sharing.channel.postMessage({ type: 'snapshot', updates, state: $('connection').dataset.state });
    } else if (!sharing.leader && message.type === 'update') {
      showPrice(message.update);
    } else if (!sharing.leader && message.type === 'snapshot') {
      message.updates.forEach(showPrice);
      if (message.state) showConnection(message.state);
    } else if (!sharing.leader && message.type === 'state') {
      showConnection(message.state, message.detail);
    }
  };
  sharing.channel.postMessage({ type: 'hello' });
  navigator.locks.request('coinwatch.prices', () => {
    sharing.leader = true;
    priceStream.start();
    return new Promise(() => {});  // held while this tab lives
  });
}

// ---------------------------------------------------------------------------------------------------------
// The device panel: thresholds saved with expected_version, and alerts as they fire

const device = {
  id: null,
  version: 0n,           // the version the form was loaded from (0 = no settings yet)
  rules: new Map(),      // symbol -> {below, above} as loaded
  removed: new Set(),    // symbols removed in the form, not yet saved
  dirty: false,
  poll: null,
  alerts: null,
  alertIDs: new Set(),
};

function ruleInputs(symbol) {
  const row = [...$('rule-rows').children].find((r) => r.dataset.symbol === symbol);
  return row && { below: row.querySelector('.below'), above: row.querySelector('.above') };
}

function addRuleRow(symbol, rule) {
  const row = document.createElement('tr');
  row.dataset.symbol = symbol;
  row.innerHTML = '<th scope="row"></th><td><input class="below" inputmode="decimal" autocomplete="off"></td>' +
    '<td><input class="above" inputmode="decimal" autocomplete="off"></td>' +
    '<td><button type="button" class="remove">Remove</button></td>';
  row.querySelector('th').textContent = symbol;
  const below = row.querySelector('.below');
  const above = row.querySelector('.above');
  below.value = plainDecimal(rule.below);
  above.value = plainDecimal(rule.above);
  below.setAttribute('aria-label', `${symbol}: alert when the price falls to or below`);
  above.setAttribute('aria-label', `${symbol}: alert when the price rises to or above`);
  const remove = row.querySelector('.remove');
  remove.setAttribute('aria-label', `Remove the ${symbol} rule`);
  remove.addEventListener('click', () => {
    row.remove();
    if (device.rules.has(symbol)) device.removed.add(symbol);
    markDirty();
  });
  for (const input of [below, above]) input.addEventListener('input', markDirty);
  const rows = $('rule-rows');
  const after = [...rows.children].find((r) => r.dataset.symbol > symbol);
  rows.insertBefore(row, after || null);
}

function markDirty() {
  device.dirty = true;
  $('settings-state').textContent = `Unsaved changes (loaded version ${device.version}).`;
}

function showSettings(settings) {
  device.version = BigInt((settings && settings.version) || '0');
  device.rules = new Map();
  device.removed = new Set();
  device.dirty = false;
  $('rule-rows').replaceChildren();
  const rules = (settings && settings.rules) || {};
  for (const symbol of Object.keys(rules).sort()) {
    const rule = { below: decimalFromJSON(rules[symbol].below), above: decimalFromJSON(rules[symbol].above) };
    device.rules.set(symbol, rule);
    addRuleRow(symbol, rule);
  }
  $('conflict').hidden = true;
  $('rules-error').textContent = '';
  $('settings-state').textContent = device.version === 0n
    ? 'No settings saved for this device yet.'
    : `Version ${device.version}, saved ${timeText(settings.updatedAtMs)}.`;
}

async function fetchSettings() {
  try {
    const answer = await unary('GetSettings', { deviceId: device.id });
    return answer.settings || {};
  } catch (e) {
    if (e.code === 'not_found') return null;
    throw e;
  }
}

async function pollSettings() {
  if (!device.id) return;
  let settings;
  try {
    settings = await fetchSettings();
  } catch (_) {
    return;  // the connection indicator tells; try again on the next round
  }
  const version = BigInt((settings && settings.version) || '0');
  if (version === device.version) return;
  if (!device.dirty) {
    showSettings(settings);
  } else {
    showConflict(version, 'These settings were changed elsewhere');
  }
}

function showConflict(version, reason) {
  $('conflict-text').textContent =
    `${reason} (now version ${version}; your edits started from version ${device.version}). Nothing was overwritten.`;
  $('conflict').hidden = false;
}

/** The patch the form asks for: rules to set and symbols to remove. */
function collectPatch() {
  const setRules = {};
  const removeSymbols = [...device.removed].filter((s) => !ruleInputs(s));
  for (const row of $('rule-rows').children) {
    const symbol = row.dataset.symbol;
    const below = parseDecimal(row.querySelector('.below').value);
    const above = parseDecimal(row.querySelector('.above').value);
    if (!below && !above) {
      if (device.rules.has(symbol)) removeSymbols.push(symbol);
      continue;
    }
    const loaded = device.rules.get(symbol);
    if (loaded && decimalEquals(loaded.below, below) && decimalEquals(loaded.above, above)) continue;
    const rule = {};
    if (below) rule.below = decimalToJSON(below);
    if (above) rule.above = decimalToJSON(above);
    setRules[symbol] = rule;
  }
  return { setRules, removeSymbols };
}

async function save(expectedVersion) {
  $('rules-error').textContent = '';
  let patch;
  try {
    patch = collectPatch();
  } catch (e) {
    $('rules-error').textContent = e.message;
    return;
  }
  $('save').disabled = true;
  try {
    const answer = await unary('SaveSettings', {
      deviceId: device.id, setRules: patch.setRules, removeSymbols: patch.removeSymbols,
      expectedVersion: expectedVersion.toString(),
    });
    showSettings(answer.settings);
    $('settings-state').textContent = `Saved: version ${device.version}.`;
  } catch (e) {
    if (e.code === 'aborted') {
      const current = await fetchSettings().catch(() => undefined);
      const version = current === undefined ? '?' : BigInt((current && current.version) || '0');
      showConflict(version, 'Not saved: these settings were changed elsewhere since you loaded them');
    } else {
      $('rules-error').textContent = `Not saved: ${e.message}`;
    }
  } finally {
    $('save').disabled = false;
  }
}

function addAlert(alert) {
  if (!alert.id || device.alertIDs.has(alert.id)) return;  // a reconnect resends pending alerts: show each once
  device.alertIDs.add(alert.id);
  const item = document.createElement('li');
  const direction = alert.direction === 'DIRECTION_ABOVE' ? 'rose to' : 'fell to';
  const threshold = formatDecimal(decimalFromJSON(alert.threshold));
  item.textContent = `${alert.symbol} ${direction} ${formatDecimal(decimalFromJSON(alert.price))} ` +
    `(threshold ${threshold})`;
  const time = document.createElement('time');
  time.dateTime = new Date(Number(alert.timeMs || '0')).toISOString();
  time.textContent = timeText(alert.timeMs);
  item.appendChild(time);
  $('alerts').prepend(item);
  while ($('alerts').children.length > 50) $('alerts').lastElementChild.remove();
}

async function openDevice(id) {
  if (device.alerts) device.alerts.stop();
  clearInterval(device.poll);
  device.id = id;
  device.alertIDs = new Set();
  $('alerts').replaceChildren();
  $('device-body').hidden = false;
  $('settings-state').textContent = 'Loading…';
  try {
    showSettings(await fetchSettings());
  } catch (e) {
    $('settings-state').textContent = `Could not load: ${e.message}`;
  }
  location.hash = 'device=' + encodeURIComponent(id);
  device.poll = setInterval(pollSettings, SETTINGS_POLL_MS);
  device.alerts = new LiveStream(
    (signal, onMessage) => serverStream('StreamAlerts', { deviceId: id }, onMessage, signal),
    addAlert,
    (state, detail = {}) => {
      $('alerts-state').textContent = state === 'live' ? 'Following alerts as they fire.'
        : state === 'reconnecting' ? `Alerts: reconnecting (attempt ${detail.attempt})…`
        : state === 'stopped' ? '' : 'Alerts: connecting…';
      if (state === 'live') $('alerts-state').dataset.state = 'live';
    },
  );
  device.alerts.start();
}

function setUp() {
  $('device-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const id = $('device-id').value.trim();
    if (id) openDevice(id);
  });
  $('rules-form').addEventListener('submit', (event) => {
    event.preventDefault();
    save(device.version);
  });
  $('add-rule').addEventListener('click', () => {
    const symbol = $('new-symbol').value.trim().toUpperCase();
    $('rules-error').textContent = '';
    if (!/^[A-Z0-9._-]{1,32}$/.test(symbol)) {
      $('rules-error').textContent = 'A symbol is 1 to 32 letters, digits, ".", "_" or "-".';
      return;
    }
    try {
      const rule = { below: parseDecimal($('new-below').value), above: parseDecimal($('new-above').value) };
      const existing = ruleInputs(symbol);
      if (existing) {
        existing.below.value = plainDecimal(rule.below);
        existing.above.value = plainDecimal(rule.above);
      } else {
        addRuleRow(symbol, rule);
      }
      device.removed.delete(symbol);
      for (const id of ['new-symbol', 'new-below', 'new-above']) $(id).value = '';
      markDirty();
    } catch (e) {
      $('rules-error').textContent = e.message;
    }
  });
  $('conflict-reload').addEventListener('click', async () => {
    try { showSettings(await fetchSettings()); } catch (e) { $('rules-error').textContent = e.message; }
  });
  $('conflict-overwrite').addEventListener('click', async () => {
    const current = await fetchSettings().catch(() => undefined);
    if (current === undefined) return;
    save(BigInt((current && current.version) || '0'));
  });
  $('retry').addEventListener('click', () => {
    priceStream.retryNow();
    if (sharing.channel && !sharing.leader) sharing.channel.postMessage({ type: 'retry' });
  });
  const match = /device=([^&]+)/.exec(location.hash);
  if (match) {
    $('device-id').value = decodeURIComponent(match[1]);
    openDevice($('device-id').value);
  }
  startPrices();
}

setUp();
