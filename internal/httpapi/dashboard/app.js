// The superagents dashboard: live from the server's event stream.
//
// EventSource cannot send an Authorization header, so the stream is read
// with fetch and a streaming body reader; the token stays in this tab's
// sessionStorage and never goes into a URL. Everything shown comes from
// the API and is inserted as text, never as HTML.
'use strict';

const TOKEN_KEY = 'superagents-token';
const STATUSES = ['queued', 'running', 'resumed', 'completed', 'error', 'cancelled'];
const ACTIVE = new Set(['queued', 'running', 'resumed']);
const MAX_ROWS = 300;

const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || '',
  tasks: new Map(), // id → task
  sessions: new Map(), // id → session
  counts: {},
  agents: [],
  lastEventId: null,
  selected: null, // session id (a task's id is its session's)
  messages: new Map(), // id → message of the selected session
  cost: null, // what the selected session or task cost: GET /v1/sessions/{id}/cost
  questions: new Map(), // task id → the question it waits to have answered
  inbox: null, // the selected task's GET /v1/tasks/{id}/inbox
  asked: new Map(), // task id → (key → question): those seen, kept once the task ends
  filter: { status: '', agent: '', search: '' },
  stream: null, // AbortController of the event stream
};

const $ = (id) => document.getElementById(id);

// el builds an element: el('span', {class: 'x'}, 'text', child...).
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const toolCalls = (t) => {
  const n = (t.progress && t.progress.tool_calls) || 0;
  return n + (n === 1 ? ' tool call' : ' tool calls');
};
const short = (id) => (id && id.length > 6 ? id.slice(0, 6) + '…' : id || '');
const marks = (t) => [t.is_forked ? '(forked)' : '', t.resume_count > 0 ? '(resumed)' : ''].filter(Boolean).join(' ');

// money is a dollar figure of the API ({usd, unpriced}) as the command
// line shows it: cents, or four decimals under a cent; "unpriced" when no
// token of it had a price, "—" before it is known.
function money(p) {
  if (!p) return '—';
  const unpriced = p.unpriced && p.unpriced.length > 0;
  if (unpriced && !p.usd) return 'unpriced';
  const usd = '$' + p.usd.toFixed(p.usd > 0 && p.usd < 0.01 ? 4 : 2);
  return unpriced ? usd + ' + unpriced' : usd;
}

function duration(t) {
  const start = Date.parse(t.started_at);
  const end = t.completed_at ? Date.parse(t.completed_at) : Date.now();
  let s = Math.max(0, Math.round((end - start) / 1000));
  if (s < 60) return s + 's';
  const m = Math.floor(s / 60);
  s %= 60;
  return m < 60 ? `${m}m${String(s).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

// ---- API -------------------------------------------------------------

async function api(method, path, body) {
  const headers = { Authorization: 'Bearer ' + state.token };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (res.status === 401) askToken('The token was refused: ' + (data.error || 'unauthorized'));
  if (!res.ok) throw new Error(data.error || `${res.status} ${res.statusText}`);
  return data;
}

// ---- token -----------------------------------------------------------

function askToken(message) {
  state.token = '';
  sessionStorage.removeItem(TOKEN_KEY);
  if (state.stream) state.stream.abort();
  const err = $('token-error');
  err.hidden = !message;
  err.textContent = message || '';
  if (!$('token-dialog').open) $('token-dialog').showModal();
  $('token-input').focus();
}

$('token-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  state.token = $('token-input').value.trim();
  try {
    await api('GET', '/v1/health');
  } catch (err) {
    askToken(err.message);
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, state.token);
  $('token-input').value = '';
  $('token-dialog').close();
  start();
});

// ---- event stream ----------------------------------------------------

async function connect() {
  let delay = 1000;
  for (;;) {
    if (!state.token) return;
    const ctl = new AbortController();
    state.stream = ctl;
    setConn('connecting');
    try {
      const headers = { Authorization: 'Bearer ' + state.token, Accept: 'text/event-stream' };
      if (state.lastEventId !== null) headers['Last-Event-ID'] = state.lastEventId;
      const res = await fetch('/v1/events', { headers, signal: ctl.signal, cache: 'no-store' });
      if (res.status === 401) { askToken('The token was refused.'); return; }
      if (!res.ok) throw new Error('event stream: ' + res.status);
      setConn('live');
      delay = 1000;
      await readEvents(res.body, dispatch);
    } catch (err) {
      if (ctl.signal.aborted && !state.token) return;
      console.warn('event stream', err);
    }
    setConn('offline');
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 15000);
  }
}

// readEvents parses a Server-Sent Events body and calls on for each event.
async function readEvents(body, on) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let ev = { event: 'message', data: [], id: null };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let nl;
    while ((nl = buf.search(/\r?\n/)) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf[nl] === '\r' ? 2 : 1));
      if (line === '') {
        if (ev.data.length) on(ev);
        ev = { event: 'message', data: [], id: null };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') ev.event = val;
      else if (field === 'data') ev.data.push(val);
      else if (field === 'id') ev.id = val;
    }
  }
}

function dispatch(ev) {
  if (ev.id !== null) state.lastEventId = ev.id;
  const data = JSON.parse(ev.data.join('\n'));
  switch (ev.event) {
    case 'snapshot': applySnapshot(data); break;
    case 'task.created': case 'task.updated': case 'task.completed': case 'task.error': case 'task.cancelled':
      upsertTask(data.data, ev.event === 'task.created');
      break;
    case 'session.created': state.sessions.set(data.data.id, data.data); scheduleRender(); break;
    case 'session.deleted': state.sessions.delete(data.session_id); scheduleRender(); break;
    case 'session.message': onMessage(data.session_id, data.data); break;
    case 'task.message': if (data.task_id === state.selected) loadInbox(data.task_id); break;
    case 'task.question':
      if (!state.questions.has(data.task_id)) state.questions.set(data.task_id, data.data.message);
      refreshQuestion(data.task_id);
      break;
    case 'task.answer': onAnswer(data.task_id, data.data); refreshQuestion(data.task_id); break;
    default: break; // heartbeat
  }
}

function applySnapshot(snap) {
  state.tasks.clear();
  state.sessions.clear();
  state.questions.clear();
  for (const t of snap.tasks) {
    state.tasks.set(t.id, t);
    if (t.question) state.questions.set(t.id, t.question);
  }
  for (const s of snap.sessions) state.sessions.set(s.id, s);
  state.counts = { ...snap.counts };
  scheduleRender();
  if (state.selected) loadTranscript(state.selected);
}

function upsertTask(task, created) {
  const old = state.tasks.get(task.id);
  if (old) state.counts[old.status] = (state.counts[old.status] || 0) - 1;
  if (old || created) state.counts[task.status] = (state.counts[task.status] || 0) + 1;
  else refreshCounts(); // an older task than the snapshot holds: ask for exact counts
  state.tasks.set(task.id, task);
  if (!ACTIVE.has(task.status)) state.questions.delete(task.id);
  // An ending marks the messages it left undelivered, and ends the questions.
  if (task.id === state.selected && old && old.status !== task.status) loadInbox(task.id);
  scheduleRender();
}

let countsTimer = null;
function refreshCounts() {
  clearTimeout(countsTimer);
  countsTimer = setTimeout(async () => {
    try {
      state.counts = (await api('GET', '/v1/stats')).by_status;
      renderCounts();
    } catch (err) { console.warn(err); }
  }, 300);
}

function onMessage(sessionId, msg) {
  const s = state.sessions.get(sessionId);
  if (s) s.last_message_id = msg.id;
  if (msg.usage && state.selected) loadCost(state.selected); // it may be part of the selected tree
  if (sessionId !== state.selected) return;
  // A message sent to the task enters its session when it is delivered.
  if (state.inbox && state.inbox.task_id === sessionId && state.inbox.messages.some(pendingMessage)) loadInbox(sessionId);
  state.messages.set(msg.id, msg);
  renderTranscript();
}

function setConn(s) {
  const c = $('conn');
  c.dataset.state = s;
  c.textContent = s;
}

// ---- rendering -------------------------------------------------------

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    renderCounts();
    renderAgentsFilter();
    renderTasks();
    renderTree();
    renderDetail();
    renderTalk();
  });
}

function renderCounts() {
  const nav = $('counts');
  nav.replaceChildren(...STATUSES.map((s) => el('span', {
    class: 'count status-' + s + (state.filter.status === s ? ' active' : ''), id: 'count-' + s,
    dataset: { count: state.counts[s] || 0 }, title: 'Show ' + s + ' tasks',
    onclick: () => { state.filter.status = state.filter.status === s ? '' : s; $('filter-status').value = state.filter.status; scheduleRender(); },
  }, el('b', {}, state.counts[s] || 0), s)));
}

function renderAgentsFilter() {
  const names = new Set(state.agents.map((a) => a.name));
  for (const t of state.tasks.values()) names.add(t.agent);
  const sel = $('filter-agent');
  const have = new Set([...sel.options].map((o) => o.value));
  for (const n of [...names].sort()) if (!have.has(n)) sel.append(el('option', { value: n }, n));
}

function visibleTasks() {
  const f = state.filter;
  const q = f.search.toLowerCase();
  return [...state.tasks.values()]
    .filter((t) => (!f.status || t.status === f.status) && (!f.agent || t.agent === f.agent) &&
      (!q || (t.description || '').toLowerCase().includes(q)))
    .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
}

// Task rows are kept by task id and updated in place, so that a live
// update never replaces the button a person is about to click: the badge,
// description and Cancel button are rebuilt only when the status or the
// description changes, the meta line (time, tool calls) on every render.
const taskRows = new Map(); // task id → { li, meta, status, desc }

function taskRow(t) {
  let r = taskRows.get(t.id);
  if (!r) {
    r = { li: el('li', { onclick: () => select(t.id) }), meta: el('span', { class: 'meta' }), status: null, desc: null };
    taskRows.set(t.id, r);
  }
  r.li.className = 'task' + (t.id === state.selected ? ' selected' : '');
  r.li.dataset.id = t.id;
  r.li.dataset.status = t.status;
  if (r.status !== t.status || r.desc !== t.description) {
    r.li.replaceChildren(
      el('span', { class: 'badge status-' + t.status }, t.status),
      el('span', { class: 'desc', title: t.description }, t.description),
      ACTIVE.has(t.status)
        ? el('button', { class: 'danger cancel', type: 'button', dataset: { id: t.id }, title: 'Cancel this task',
          onclick: (e) => { e.stopPropagation(); cancelTask(t.id); } }, 'Cancel')
        : el('span'),
      r.meta);
    r.status = t.status;
    r.desc = t.description;
  }
  const q = state.questions.get(t.id);
  r.meta.replaceChildren(el('span', { class: 'tid' }, short(t.id)), el('span', { class: 'marks' }, marks(t)),
    ` · ${t.agent} · ${duration(t)} · ${toolCalls(t)}`, ...(q ? [el('span', { class: 'asks', title: q }, ' · waiting for your answer')] : []));
  return r.li;
}

function renderTasks() {
  const list = visibleTasks().slice(0, MAX_ROWS);
  const ul = $('task-list');
  $('task-empty').hidden = list.length > 0;
  const shown = new Set(list.map((t) => t.id));
  for (const [id, r] of taskRows) {
    if (!shown.has(id)) {
      r.li.remove();
      taskRows.delete(id);
    }
  }
  // Place the rows in order, moving only those out of place.
  let prev = null;
  for (const t of list) {
    const li = taskRow(t);
    const want = prev ? prev.nextSibling : ul.firstChild;
    if (li !== want) ul.insertBefore(li, want);
    prev = li;
  }
}

// The agent tree: a task hangs under the session that launched it, a
// forked session under the one it was forked from.
function renderTree() {
  const nodes = new Map();
  const node = (id) => {
    if (!nodes.has(id)) nodes.set(id, { id, children: [], parent: null });
    return nodes.get(id);
  };
  for (const s of state.sessions.values()) {
    const n = node(s.id);
    n.session = s;
    if (s.parent_id) n.parent = s.parent_id;
  }
  for (const t of state.tasks.values()) {
    const n = node(t.id);
    n.task = t;
    n.parent = t.parent_session_id;
  }
  const roots = [];
  for (const n of nodes.values()) {
    if (n.parent) node(n.parent).children.push(n);
    else roots.push(n);
  }
  const order = (a, b) => {
    const ka = (a.task || a.session || {}).created_at || '';
    const kb = (b.task || b.session || {}).created_at || '';
    return ka < kb ? 1 : ka > kb ? -1 : 0;
  };
  const render = (n) => {
    const label = [];
    if (n.task) {
      label.push(el('span', { class: 'dot status-' + n.task.status, title: n.task.status }),
        el('span', { class: 'kind' }, 'task'), el('span', { class: 'mono' }, short(n.id)),
        el('span', { class: 'marks' }, marks(n.task)), el('span', {}, n.task.description));
    } else {
      const s = n.session || {};
      label.push(el('span', { class: 'kind' }, s.parent_id ? 'fork' : 'session'), el('span', { class: 'mono' }, short(n.id)),
        el('span', {}, [s.agent, s.title].filter(Boolean).join(' · ')));
    }
    const kids = n.children.sort(order);
    return el('li', {},
      el('div', { class: 'node' + (n.id === state.selected ? ' selected' : ''), dataset: { id: n.id }, onclick: () => select(n.id) }, label),
      kids.length ? el('ul', {}, kids.map(render)) : null);
  };
  $('tree').replaceChildren(...roots.sort(order).slice(0, MAX_ROWS).map(render));
}

// renderDetail redraws the selected item's header only when it changed,
// so that a follow-up being typed is not lost; the clock ticks in place.
let detailShown = '';
function renderDetail() {
  const box = $('detail');
  const id = state.selected;
  if (!id) return;
  const t = state.tasks.get(id);
  const s = state.sessions.get(id) || {};
  const shown = JSON.stringify([id, t || s]);
  if (shown === detailShown) {
    if (t && $('detail-duration')) $('detail-duration').textContent = duration(t);
    showCost();
    return;
  }
  detailShown = shown;
  $('composer').hidden = !!t;
  const costs = [el('span', { id: 'detail-cost', title: 'what its own model calls cost' }),
    el('span', { id: 'detail-tree-cost', title: 'with every task it launched, at any depth, resumes included' }),
    el('span', { id: 'detail-cache', title: 'its own tokens read from and written to the prompt cache, and what that saved' })];
  if (!t) {
    box.replaceChildren(el('h2', {}, s.parent_id ? 'Forked agent' : 'Agent'),
      el('div', { class: 'title' }, s.title || 'session ' + short(id)),
      facts(el('span', { class: 'mono' }, id), s.agent && 'agent ' + s.agent, s.parent_id && 'forked from ' + short(s.parent_id), ...costs));
    showCost();
    return;
  }
  const actions = el('div', { class: 'actions' });
  if (ACTIVE.has(t.status)) {
    actions.append(el('button', { id: 'detail-cancel', class: 'danger', type: 'button', onclick: () => cancelTask(t.id) }, 'Cancel task'));
  } else if (t.status === 'completed' || t.resume_count > 0) { // a resume that did not complete may be tried again
    const input = el('input', { id: 'resume-text', placeholder: 'Follow-up for this task…', 'aria-label': 'Follow-up' });
    actions.append(el('form', { class: 'resume', onsubmit: (e) => { e.preventDefault(); resumeTask(t.id, input.value); } },
      input, el('button', { id: 'resume-send', class: 'primary', type: 'submit' }, 'Resume')));
  }
  box.replaceChildren(...[
    el('h2', {}, 'Task'),
    el('div', { class: 'title' }, el('span', { id: 'detail-status', class: 'badge status-' + t.status }, t.status), ' ', t.description),
    facts(el('span', { class: 'mono' }, t.id), marks(t), 'agent ' + t.agent, 'parent ' + short(t.parent_session_id),
      el('span', { id: 'detail-duration' }, duration(t)), toolCalls(t),
      t.progress && t.progress.phase && ACTIVE.has(t.status) && 'now: ' + t.progress.phase, ...costs),
    t.result && el('div', { class: 'result' }, t.result),
    t.error && el('div', { class: 'result error' }, t.error),
    actions,
  ].filter(Boolean));
  showCost();
}

// showCost writes the selected item's cost in place: a redraw would lose
// a follow-up being typed.
function showCost() {
  const c = state.cost && state.cost.id === state.selected ? state.cost : null;
  if ($('detail-cost')) $('detail-cost').textContent = 'cost ' + money(c && c.cost);
  if ($('detail-tree-cost')) $('detail-tree-cost').textContent = 'with its tasks ' + money(c && c.tree_cost);
  if ($('detail-cache')) $('detail-cache').textContent = cacheLine(c && c.cost);
}

// cacheLine says what the prompt cache did for a cost: tokens read and
// written, and the dollars saved when the model has a price.
function cacheLine(p) {
  if (!p || (!p.cache_read_tokens && !p.cache_write_tokens)) return 'cache —';
  let line = 'cache read ' + (p.cache_read_tokens || 0) + ', written ' + (p.cache_write_tokens || 0);
  if (p.cache_saved_usd) line += ', saved ' + money({ usd: p.cache_saved_usd });
  return line;
}

// facts lays out short facts, each in its own box.
function facts(...items) {
  return el('div', { class: 'facts' }, items.filter(Boolean).map((f) => (f instanceof Node ? f : el('span', {}, f))));
}

// ---- transcript ------------------------------------------------------

function select(id) {
  if (state.selected === id) return;
  state.selected = id;
  state.cost = null;
  loadCost(id);
  state.messages.clear();
  state.inbox = null;
  $('talk-error').hidden = true;
  shownUpTo = 0;
  shownCount = 0;
  $('transcript').replaceChildren();
  scheduleRender();
  loadTranscript(id);
  if (state.tasks.has(id)) loadInbox(id);
}

// loadCost asks what the selected item cost, at most once a second
// however many messages arrive.
let costTimer = null;
let costAgain = false;
function loadCost(id) {
  if (costTimer) { costAgain = true; return; }
  costAgain = false;
  costTimer = setTimeout(() => {
    costTimer = null;
    if (costAgain && state.selected) loadCost(state.selected);
  }, 1000);
  api('GET', '/v1/sessions/' + id + '/cost').then((c) => {
    if (state.selected !== id) return;
    state.cost = c;
    renderDetail();
  }, (err) => console.warn(err));
}

async function loadTranscript(id) {
  try {
    const data = await api('GET', '/v1/sessions/' + id + '/history');
    if (state.selected !== id) return;
    for (const m of data.messages) state.messages.set(m.id, m);
    renderTranscript();
  } catch (err) {
    if (state.selected === id) $('transcript').replaceChildren(el('p', { class: 'error' }, err.message));
  }
}

// renderTranscript appends the messages newer than those shown (the live
// case), and redraws everything only when an older one arrives late.
let shownUpTo = 0;
let shownCount = 0;
const callNames = new Map(); // call id → tool name
function renderTranscript() {
  const box = $('transcript');
  const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 60;
  const msgs = [...state.messages.values()].sort((a, b) => a.id - b.id);
  const fresh = msgs.filter((m) => m.id > shownUpTo);
  if (shownCount > 0 && msgs.length - fresh.length === shownCount) {
    box.append(...fresh.map((m) => renderMessage(m, callNames)).filter(Boolean));
  } else {
    callNames.clear();
    box.replaceChildren(...msgs.map((m) => renderMessage(m, callNames)).filter(Boolean));
  }
  shownUpTo = msgs.length ? msgs[msgs.length - 1].id : 0;
  shownCount = msgs.length;
  if (atBottom) box.scrollTop = box.scrollHeight;
}

function renderMessage(m, names) {
  const visible = (m.parts || []).filter((p) => !p.hidden);
  const text = visible.filter((p) => p.type === 'text').map((p) => p.text).join('\n\n');
  const attrs = (cls) => ({ class: 'msg ' + cls, dataset: { id: m.id, role: m.role, kind: m.kind || 'message' } });
  switch (m.kind) {
    case 'clear': return el('div', attrs('clear'), 'context cleared');
    case 'fork': return el('div', attrs('note'), text);
    case 'notification': return text ? el('div', attrs('note'), text) : null;
    case 'command': return null;
    default: break;
  }
  if (m.role === 'system') {
    return el('details', attrs('note'), el('summary', {}, 'Context given to the agent'), el('pre', {}, text));
  }
  if (m.role === 'tool') {
    return el('div', attrs('tool'), visible.filter((p) => p.type === 'tool_result').map((p) => el('div', { class: p.is_error ? 'is-error' : '' },
      el('div', { class: 'who' }, 'result of ' + (p.name || names.get(p.call_id) || 'tool') + (p.is_error ? ' (error)' : '')),
      el('pre', { class: 'output' }, clip(p.output || '')))));
  }
  const who = m.role === 'user' ? 'user' : 'agent';
  const body = [];
  for (const p of visible) {
    if (p.type === 'text' && p.text) body.push(el('div', { class: 'text' }, p.text));
    else if (p.type === 'reasoning' && p.text) body.push(el('details', {}, el('summary', {}, 'reasoning'), el('pre', {}, p.text)));
    else if (p.type === 'tool_call') {
      names.set(p.call_id, p.name);
      body.push(el('div', { class: 'call' }, el('span', { class: 'name' }, '⚙ ' + p.name), el('pre', {}, clip(JSON.stringify(p.input || {}, null, 2)))));
    }
  }
  if (!body.length) return null;
  return el('div', attrs(m.role === 'user' ? 'user' : 'assistant'),
    el('div', { class: 'who' }, el('span', {}, who), el('span', {}, m.model || '')), body);
}

function clip(s) {
  return s.length > 4000 ? s.slice(0, 3000) + `\n… [${s.length - 3500} characters not shown] …\n` + s.slice(-500) : s;
}

// ---- talking to a running task -----------------------------------------

// A running task is sent messages (it reads them before its next model
// request) and answers its questions with them. What was sent, and what
// it asked, are shown from GET /v1/tasks/{id}/inbox, asked again when the
// stream says they changed; the latest answer wins.

const pendingMessage = (m) => !m.delivered_at && !m.undelivered;

let inboxAsked = 0;
async function loadInbox(id) {
  const n = ++inboxAsked;
  try {
    const data = await api('GET', '/v1/tasks/' + id + '/inbox');
    if (n !== inboxAsked || state.selected !== id) return;
    // The store forgets a run's questions when it ends; the page keeps
    // those it saw.
    const seen = state.asked.get(id) || new Map();
    for (const q of data.questions) seen.set(q.key, q);
    state.asked.set(id, seen);
    state.inbox = data;
    scheduleRender();
  } catch (err) { console.warn(err); }
}

// onAnswer marks a question the page shows as answered (or given up) as
// the stream says: a task that goes on at once may end before the inbox
// is read again, and the store forgets its questions then.
function onAnswer(taskId, req) {
  const seen = state.asked.get(taskId);
  const q = seen && seen.get(req.key);
  if (!q) return;
  const res = req.response || {}; // MCP's elicitation result
  const outcome = { accept: 'answered', decline: 'declined', no_answer: 'no_answer' }[res.action] || 'dismissed';
  const values = Object.values(res.content || {});
  let answer = '';
  if (outcome === 'answered' && values.length) {
    const v = values[0];
    answer = typeof v === 'boolean' ? (v ? 'yes' : 'no') : typeof v === 'string' ? v : JSON.stringify(v);
  }
  seen.set(req.key, { ...q, outcome, answer, answered_at: req.answered_at });
  scheduleRender();
}

// refreshQuestion asks which question a task now waits on, for the list.
const questionAsked = new Map(); // task id → number of its latest lookup
async function refreshQuestion(id) {
  if (id === state.selected) loadInbox(id);
  const n = (questionAsked.get(id) || 0) + 1;
  questionAsked.set(id, n);
  try {
    const t = await api('GET', '/v1/tasks/' + id);
    if (questionAsked.get(id) !== n) return;
    if (t.question) state.questions.set(id, t.question);
    else state.questions.delete(id);
    scheduleRender();
  } catch (err) { console.warn(err); }
}

// renderTalk shows, for the selected task, what was sent to it and what
// it asked, and the form that fits: an answer when it waits on a question,
// else a message while it runs. The forms are rebuilt only when the
// question changes, so that what is being typed stays.
let talkShown = '';
function renderTalk() {
  const t = state.tasks.get(state.selected);
  const talk = $('talk');
  if (!t) { talk.hidden = true; talkShown = ''; return; }
  const inbox = state.inbox && state.inbox.task_id === t.id ? state.inbox : null;
  const active = ACTIVE.has(t.status);
  const waiting = active && inbox ? inbox.questions.find((q) => q.outcome === 'waiting') : null;
  const entries = [
    ...(inbox ? inbox.messages : []).map((m) => ({ at: m.created_at, m })),
    // The question waiting is in its own box, not here too.
    ...[...(state.asked.get(t.id) || new Map()).values()].filter((q) => !waiting || q.key !== waiting.key).map((q) => ({ at: q.asked_at, q })),
  ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  talk.hidden = !active && entries.length === 0;
  const shown = JSON.stringify([t.id, active, entries]);
  if (shown !== talkShown) {
    talkShown = shown;
    const list = $('inbox');
    list.replaceChildren(...entries.map((e) => (e.m ? sentItem(e.m) : askedItem(e.q, active))));
    list.hidden = entries.length === 0;
    list.scrollTop = list.scrollHeight;
  }
  renderQuestion(t.id, waiting);
  $('steer-form').hidden = !active || !!waiting;
}

function sentItem(m) {
  const st = m.delivered_at ? 'delivered' : m.undelivered ? 'undelivered' : 'waiting';
  const note = { delivered: 'delivered', waiting: 'waiting for its next step', undelivered: 'not delivered: ' + m.undelivered }[st];
  return el('li', { class: 'inbox-item sent', dataset: { seq: m.seq, state: st }, title: 'from ' + m.from },
    el('div', { class: 'who' }, el('span', {}, 'message from ' + (m.from === 'the user' ? 'you' : 'its launcher')), el('span', { class: 'state' }, note)),
    el('div', { class: 'text' }, m.text));
}

function askedItem(q, active) {
  const outcome = q.outcome === 'waiting' && !active ? 'ended' : q.outcome;
  const note = {
    waiting: 'waiting for your answer', answered: 'answered', declined: 'declined', dismissed: 'dismissed',
    no_answer: 'nobody answered in time', ended: 'no longer asked: the task ended',
  }[outcome] || outcome;
  return el('li', { class: 'inbox-item asked', dataset: { key: q.key, outcome } },
    el('div', { class: 'who' }, el('span', {}, 'the task asked'), el('span', { class: 'state' }, note)),
    el('div', { class: 'text' }, q.question),
    q.answer && el('div', { class: 'answer' }, 'answer: ' + q.answer));
}

// renderQuestion shows the question a task waits on: a button per
// choice (yes and no for a permission), else a text field.
let questionShown = '';
function renderQuestion(id, q) {
  $('question').hidden = !q;
  const key = q ? id + ' ' + q.key : '';
  if (key === questionShown) return;
  questionShown = key;
  if (!q) return;
  $('question-text').textContent = q.question;
  const choices = q.choices || [];
  $('question-choices').replaceChildren(...choices.map((c) => el('button', {
    class: 'choice', type: 'button', dataset: { choice: c },
    onclick: (e) => sendToTask(id, c, null, [...e.target.parentNode.children]),
  }, c)));
  $('answer-form').hidden = choices.length > 0;
  $('answer-text').value = '';
}

// sendToTask sends a message or an answer; its controls are disabled
// meanwhile, so that a double click does not send the answer twice (the
// second would be a message).
async function sendToTask(id, message, input, controls) {
  const err = $('talk-error');
  err.hidden = true;
  for (const c of controls) c.disabled = true;
  try {
    await api('POST', '/v1/tasks/' + id + '/messages', { message });
    if (input) input.value = '';
    if (state.selected === id) loadInbox(id);
  } catch (e) {
    err.hidden = false;
    err.textContent = e.message;
  } finally {
    for (const c of controls) c.disabled = false;
  }
}

for (const [form, input, button] of [['steer-form', 'steer-text', 'steer-send'], ['answer-form', 'answer-text', 'answer-send']]) {
  $(form).addEventListener('submit', (e) => {
    e.preventDefault();
    const text = $(input).value;
    if (state.selected && text.trim()) sendToTask(state.selected, text, $(input), [$(button)]);
  });
}

// ---- actions ---------------------------------------------------------

// Actions change tasks through the API; what they become is shown from the
// event stream, which has the changes in order (a reply may arrive after
// newer events, and must not undo them).
async function cancelTask(id) {
  try {
    await api('POST', '/v1/tasks/' + id + '/cancel');
  } catch (err) { alertLine(err.message); }
}

async function resumeTask(id, prompt) {
  try {
    await api('POST', '/v1/tasks/' + id + '/resume', { prompt });
  } catch (err) { alertLine(err.message); }
}

function alertLine(msg) {
  $('detail').append(el('p', { class: 'error' }, msg));
}

$('composer').addEventListener('submit', async (e) => {
  e.preventDefault();
  const text = $('composer-text').value;
  if (!state.selected || !text.trim()) return;
  try {
    await api('POST', '/v1/sessions/' + state.selected + '/messages', { text });
    $('composer-text').value = '';
  } catch (err) { alertLine(err.message); }
});

$('launch-open').addEventListener('click', () => {
  const sel = $('launch-session');
  const sessions = [...state.sessions.values()].filter((s) => !state.tasks.has(s.id))
    .sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
  sel.replaceChildren(el('option', { value: '' }, 'a new session'),
    ...sessions.map((s) => el('option', { value: s.id }, short(s.id) + ' ' + (s.agent || '') + (s.title ? ' · ' + s.title : ''))));
  if (state.selected && state.sessions.has(state.selected) && !state.tasks.has(state.selected)) sel.value = state.selected;
  $('launch-agent').replaceChildren(...state.agents.map((a) => el('option', { value: a.name, title: a.description }, a.name)));
  $('launch-error').hidden = true;
  $('launch-dialog').showModal();
});
$('launch-cancel').addEventListener('click', () => $('launch-dialog').close());

$('launch-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const err = $('launch-error');
  try {
    let session = $('launch-session').value;
    const agent = $('launch-agent').value;
    if (!session) session = (await api('POST', '/v1/sessions', { agent, title: 'dashboard' })).id;
    const task = await api('POST', '/v1/tasks', {
      session_id: session, agent,
      description: $('launch-description').value, prompt: $('launch-prompt').value, fork: $('launch-fork').checked,
    });
    if (!state.tasks.has(task.id)) upsertTask(task, true); // else the stream was first
    $('launch-dialog').close();
    $('launch-form').reset();
    select(task.id);
  } catch (e2) {
    err.hidden = false;
    err.textContent = e2.message;
  }
});

$('filter-status').addEventListener('change', (e) => { state.filter.status = e.target.value; scheduleRender(); });
$('filter-agent').addEventListener('change', (e) => { state.filter.agent = e.target.value; scheduleRender(); });
$('filter-search').addEventListener('input', (e) => { state.filter.search = e.target.value; scheduleRender(); });

// Durations of running tasks tick.
setInterval(() => { if ([...state.tasks.values()].some((t) => ACTIVE.has(t.status))) scheduleRender(); }, 1000);

// ---- start -----------------------------------------------------------

async function start() {
  try {
    state.agents = (await api('GET', '/v1/agents')).agents || [];
  } catch (err) {
    if (!state.token) return;
    console.warn(err);
  }
  connect();
}

if (state.token) start();
else askToken('');
