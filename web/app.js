/*
 * tributary web UI: plain JavaScript, no framework, no build step.
 *
 * It talks only to the server that served it: Kafka Connect's REST API for
 * connectors, plugins and offsets, and GET /metrics (Prometheus text) for
 * rates, lag and error counts. Views, chosen by the URL's hash:
 *   #/                         overview of every connector
 *   #/connectors/NAME          one connector: status, activity, offsets, config
 *   #/new                      create a connector from a plugin's generated form
 *   #/connectors/NAME/edit     edit a connector's configuration
 * The current view refreshes itself every REFRESH_MS while "Live refresh"
 * is on and the page is visible.
 */
'use strict';

(function () {
    const REFRESH_MS = 2000;
    const VALIDATE_DELAY_MS = 250;
    const STATES = ['RUNNING', 'PAUSED', 'STOPPED', 'FAILED', 'UNASSIGNED', 'RESTARTING'];
    const HIDDEN = '[hidden]';
    const enc = encodeURIComponent;

    /* ------------------------------------------------------------------
     * DOM helpers: every text goes through textContent, never innerHTML.
     */

    function append(node, children) {
        for (const child of children) {
            if (child === null || child === undefined || child === false) {
                continue;
            }
            if (Array.isArray(child)) {
                append(node, child);
            } else if (child instanceof Node) {
                node.appendChild(child);
            } else {
                node.appendChild(document.createTextNode(String(child)));
            }
        }
        return node;
    }

    function h(tag, props, ...children) {
        const node = document.createElement(tag);
        for (const [key, value] of Object.entries(props || {})) {
            if (value === undefined || value === null || value === false) {
                continue;
            }
            if (key === 'class') {
                node.className = value;
            } else if (key === 'text') {
                node.textContent = value;
            } else if (key === 'value') {
                node.value = value;
            } else if (key === 'dataset') {
                Object.assign(node.dataset, value);
            } else if (key.startsWith('on') && typeof value === 'function') {
                node.addEventListener(key.slice(2), value);
            } else {
                node.setAttribute(key, value === true ? '' : String(value));
            }
        }
        return append(node, children);
    }

    function $(id) {
        return document.getElementById(id);
    }

    /* Replaces container's children with build()'s when signature changed,
     * keeping keyboard focus (elements with data-focus-key) and the open
     * state of <details data-key> across the rebuild. */
    function rebuild(container, signature, build) {
        if (container.dataset.signature === signature) {
            return;
        }
        container.dataset.signature = signature;
        const active = document.activeElement;
        const focusKey =
            active && container.contains(active) ? active.dataset.focusKey : undefined;
        const open = new Set();
        for (const details of container.querySelectorAll('details[data-key]')) {
            if (details.open) {
                open.add(details.dataset.key);
            }
        }
        container.replaceChildren();
        append(container, [build()]);
        for (const details of container.querySelectorAll('details[data-key]')) {
            if (open.has(details.dataset.key)) {
                details.open = true;
            }
        }
        if (focusKey !== undefined) {
            for (const node of container.querySelectorAll('[data-focus-key]')) {
                if (node.dataset.focusKey === focusKey) {
                    node.focus();
                    break;
                }
            }
        }
    }

    function formatCount(n) {
        if (n === null || n === undefined || Number.isNaN(n)) {
            return '—';
        }
        return Math.round(n).toLocaleString('en');
    }

    function formatRate(n) {
        if (n === null || n === undefined || Number.isNaN(n)) {
            return '—';
        }
        if (n > 0 && n < 10) {
            return n.toFixed(1);
        }
        return Math.round(n).toLocaleString('en');
    }

    function shortClass(name) {
        const text = String(name || '');
        return text.slice(text.lastIndexOf('.') + 1);
    }

    function firstLine(text) {
        return String(text || '').split('\n')[0];
    }

    function clock(date) {
        return date.toLocaleTimeString('en-GB', {hour12: false});
    }

    function stateBadge(state) {
        const known = STATES.includes(state) ? state.toLowerCase() : 'unknown';
        return h('span', {class: `badge state-${known}`, text: state || 'UNKNOWN'});
    }

    /* ------------------------------------------------------------------
     * The REST API.
     */

    class ApiError extends Error {
        constructor(status, message) {
            super(message);
            this.status = status;
        }
    }

    async function call(method, path, body, asText) {
        const init = {
            method,
            headers: {Accept: asText ? 'text/plain' : 'application/json'},
            credentials: 'same-origin',
            cache: 'no-store',
        };
        if (body !== undefined) {
            init.headers['Content-Type'] = 'application/json';
            init.body = JSON.stringify(body);
        }
        let response;
        try {
            response = await fetch(path, init);
        } catch (err) {
            throw new ApiError(0, `The server did not answer (${err.message})`);
        }
        const text = await response.text();
        if (!response.ok) {
            let message = `HTTP ${response.status}`;
            try {
                message = JSON.parse(text).message || message;
            } catch (err) {
                /* not an ErrorMessage: keep the status */
            }
            if (response.status === 401) {
                showAuthProblem();
            }
            throw new ApiError(response.status, message);
        }
        if (asText) {
            return text;
        }
        return text ? JSON.parse(text) : null;
    }

    const api = {
        get: (path) => call('GET', path),
        text: (path) => call('GET', path, undefined, true),
        put: (path, body) => call('PUT', path, body),
        post: (path, body) => call('POST', path, body),
        patch: (path, body) => call('PATCH', path, body),
        del: (path) => call('DELETE', path),
    };

    function connectorPath(name, rest) {
        return `/connectors/${enc(name)}${rest || ''}`;
    }

    /* ------------------------------------------------------------------
     * Metrics: GET /metrics parsed, and rates from the change between two
     * scrapes.
     */

    const WANTED = new Set([
        'tributary_task_records_read_total',
        'tributary_task_records_written_total',
        'tributary_task_records_dlq_total',
        'tributary_task_records_dropped_total',
        'tributary_task_conversion_errors_total',
        'tributary_task_restarts_total',
        'tributary_source_delivery_errors_total',
        'tributary_sink_partition_lag',
        'tributary_sink_partition_committed_offset',
        'tributary_sink_partition_position',
        'tributary_sink_partition_end_offset',
        'tributary_sink_partition_stopped',
    ]);

    function parseLabels(text) {
        const labels = {};
        const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
        let m;
        while ((m = re.exec(text)) !== null) {
            labels[m[1]] = m[2].replace(/\\(.)/g, (all, c) => (c === 'n' ? '\n' : c));
        }
        return labels;
    }

    /* Prometheus text format 0.0.4: "name{label="value",...} number". */
    function parseMetrics(text) {
        const samples = [];
        for (const line of text.split('\n')) {
            if (line === '' || line[0] === '#') {
                continue;
            }
            const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
            if (!m || !WANTED.has(m[1])) {
                continue;
            }
            samples.push({name: m[1], labels: parseLabels(m[2] || ''), value: Number(m[3])});
        }
        return samples;
    }

    function emptyTotals() {
        return {
            read: 0, written: 0, dlq: 0, dropped: 0, conversion: 0, delivery: 0,
            restarts: 0, tasks: 0, lag: null, partitions: new Map(),
        };
    }

    const metrics = {
        previous: null,
        current: null,
        available: true,

        /* Takes a new scrape; returns nothing. Logs error counters that grew. */
        update(text, time) {
            const counters = new Map(); /* "name\0connector\0task[\0extra]" -> value */
            const connectors = new Map();
            const totals = (name) => {
                if (!connectors.has(name)) {
                    connectors.set(name, emptyTotals());
                }
                return connectors.get(name);
            };
            for (const s of parseMetrics(text)) {
                const c = s.labels.connector;
                if (c === undefined) {
                    continue;
                }
                const t = totals(c);
                const extra = s.labels.stage || s.labels.error || '';
                counters.set([s.name, c, s.labels.task, extra].join('\0'), s.value);
                const partKey = `${s.labels.topic}\0${s.labels.partition}`;
                const part = () => {
                    if (!t.partitions.has(partKey)) {
                        t.partitions.set(partKey, {
                            topic: s.labels.topic, partition: Number(s.labels.partition),
                        });
                    }
                    return t.partitions.get(partKey);
                };
                switch (s.name) {
                case 'tributary_task_records_read_total':
                    t.read += s.value;
                    t.tasks++;
                    break;
                case 'tributary_task_records_written_total':
                    t.written += s.value;
                    break;
                case 'tributary_task_records_dlq_total':
                    t.dlq += s.value;
                    break;
                case 'tributary_task_records_dropped_total':
                    t.dropped += s.value;
                    break;
                case 'tributary_task_conversion_errors_total':
                    t.conversion += s.value;
                    break;
                case 'tributary_source_delivery_errors_total':
                    t.delivery += s.value;
                    break;
                case 'tributary_task_restarts_total':
                    t.restarts += s.value;
                    break;
                case 'tributary_sink_partition_lag':
                    t.lag = (t.lag || 0) + s.value;
                    part().lag = s.value;
                    break;
                case 'tributary_sink_partition_committed_offset':
                    part().committed = s.value;
                    break;
                case 'tributary_sink_partition_position':
                    part().position = s.value;
                    break;
                case 'tributary_sink_partition_end_offset':
                    part().end = s.value;
                    break;
                case 'tributary_sink_partition_stopped':
                    if (s.value > 0) {
                        part().stopped = s.labels.reason || 'stopped';
                    }
                    break;
                }
            }
            this.previous = this.current;
            this.current = {time, counters, connectors};
            this.available = true;
            if (this.previous) {
                this.logGrowth();
            }
        },

        /* Sum over the series of one metric of a connector that exist in
         * both scrapes of the growth per second; null before two scrapes. */
        rate(metric, connector) {
            if (!this.previous || !this.current) {
                return null;
            }
            const seconds = (this.current.time - this.previous.time) / 1000;
            if (seconds <= 0) {
                return null;
            }
            let sum = 0;
            let seen = false;
            const prefix = `${metric}\0${connector}\0`;
            for (const [key, value] of this.current.counters) {
                if (!key.startsWith(prefix) || !this.previous.counters.has(key)) {
                    continue;
                }
                seen = true;
                sum += Math.max(0, value - this.previous.counters.get(key));
            }
            return seen ? sum / seconds : null;
        },

        of(connector) {
            const totals = (this.current && this.current.connectors.get(connector)) ||
                           emptyTotals();
            return Object.assign({}, totals, {
                readRate: this.rate('tributary_task_records_read_total', connector),
                writeRate: this.rate('tributary_task_records_written_total', connector),
            });
        },

        logGrowth() {
            for (const [key, value] of this.current.counters) {
                const [name, connector, task, extra] = key.split('\0');
                const before = this.previous.counters.get(key);
                if (!GROWTH_MESSAGES[name] || before === undefined || value <= before) {
                    continue;
                }
                errorLog.noteGrowth(connector, `task ${task}`, name, extra,
                                    Math.round(value - before));
            }
        },
    };

    /* ------------------------------------------------------------------
     * Recent errors, per connector, kept while the page is open: failure
     * traces seen in statuses, and error counters that grew (one entry per
     * counter, moved to the top and summed each time it grows again).
     */

    const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
    const GROWTH_MESSAGES = {
        tributary_task_records_dlq_total: (n) =>
            `${plural(n, 'record')} sent to the dead letter queue`,
        tributary_task_records_dropped_total: (n) =>
            `${plural(n, 'record')} dropped (errors.tolerance=all)`,
        tributary_task_conversion_errors_total: (n, extra) =>
            `${plural(n, 'record')} refused by the ${extra.toLowerCase()}`,
        tributary_source_delivery_errors_total: (n, extra) =>
            `${plural(n, 'record')} not acknowledged by Kafka (${extra})`,
        tributary_task_restarts_total: (n) => `restarted ${plural(n, 'time')}`,
    };

    const errorLog = {
        entries: new Map(),
        lastTrace: new Map(),

        list(connector) {
            if (!this.entries.has(connector)) {
                this.entries.set(connector, []);
            }
            return this.entries.get(connector);
        },

        add(connector, entry) {
            const list = this.list(connector);
            list.unshift(entry);
            list.length = Math.min(list.length, 50);
        },

        note(connector, where, message, detail) {
            this.add(connector, {time: new Date(), where, message, detail});
        },

        noteGrowth(connector, where, metric, extra, n) {
            const key = `${where}\0${metric}\0${extra}`;
            const list = this.list(connector);
            const index = list.findIndex((e) => e.key === key);
            const entry = index >= 0 ? list.splice(index, 1)[0]
                : {key, since: new Date(), count: 0, where};
            entry.count += n;
            entry.time = new Date();
            entry.message = GROWTH_MESSAGES[metric](entry.count, extra) +
                (entry.count > n ? ` since ${clock(entry.since)}` : '');
            this.add(connector, entry);
        },

        /* Notes each new trace of a connector's status. */
        noteStatus(status) {
            const seen = [['connector', status.connector]].concat(
                (status.tasks || []).map((t) => [`task ${t.id}`, t]));
            for (const [where, item] of seen) {
                const key = `${status.name}\0${where}`;
                if (item && item.trace && this.lastTrace.get(key) !== item.trace) {
                    this.note(status.name, where, `${item.state}: ${firstLine(item.trace)}`,
                              item.trace);
                }
                this.lastTrace.set(key, item && item.trace);
            }
        },

        of(connector) {
            return this.entries.get(connector) || [];
        },
    };

    /* ------------------------------------------------------------------
     * Page furniture: toasts, the dialog, the auth notice.
     */

    function toast(message, kind) {
        const item = h('div', {class: `toast ${kind || 'info'}`,
                               role: kind === 'error' ? 'alert' : null}, message);
        $('toasts').appendChild(item);
        setTimeout(() => item.remove(), kind === 'error' ? 10000 : 5000);
    }

    let authShown = false;
    function showAuthProblem() {
        if (authShown) {
            return;
        }
        authShown = true;
        toast('The server asks for credentials (rest.auth). Reload the page to sign in.',
              'error');
    }

    /* Opens the modal dialog with title, body nodes and buttons; resolves
     * with the value of the button chosen, or null on Escape or Cancel. */
    function openDialog(title, body, buttons) {
        const dialog = $('dialog');
        return new Promise((resolve) => {
            const finish = (value) => {
                dialog.removeEventListener('close', onClose);
                if (dialog.open) {
                    dialog.close();
                }
                resolve(value);
            };
            const onClose = () => finish(null);
            const row = h('div', {class: 'dialog-buttons'});
            let first = null;
            for (const b of buttons) {
                const button = h('button', {
                    type: 'button', class: b.class || '', text: b.label,
                    disabled: b.disabled, onclick: () => finish(b.value),
                });
                if (b.autofocus) {
                    first = button;
                }
                row.appendChild(button);
            }
            dialog.replaceChildren(h('h2', {id: 'dialog-title', text: title}),
                                   h('div', {class: 'dialog-body'}, body), row);
            dialog.addEventListener('close', onClose);
            dialog.showModal();
            if (first) {
                first.focus();
            }
        });
    }

    /* ------------------------------------------------------------------
     * Views and the router.
     */

    let current = null;
    let timer = null;
    let running = false;
    let again = false;

    function live() {
        return $('live').checked;
    }

    function schedule(delay) {
        clearTimeout(timer);
        timer = setTimeout(tick, delay);
    }

    /* Refreshes the current view now (after an action), then on the timer. */
    function refreshSoon() {
        schedule(0);
    }

    async function tick() {
        timer = null;
        const view = current;
        if (!view || !view.refresh) {
            return;
        }
        if (running) {
            again = true;
            return;
        }
        running = true;
        try {
            await view.refresh();
            $('updated').textContent = `updated ${clock(new Date())}`;
        } catch (err) {
            if (view === current && view.failed) {
                view.failed(err);
            }
        } finally {
            running = false;
        }
        if (again) {
            /* asked for while this one ran, maybe by a new view */
            again = false;
            schedule(0);
        } else if (view === current && live() && !document.hidden) {
            /* rates need two scrapes: the second comes sooner */
            schedule(metrics.previous ? REFRESH_MS : REFRESH_MS / 2);
        }
    }

    /* Fetches /metrics for a view; a failure leaves the previous numbers. */
    async function scrape() {
        try {
            metrics.update(await api.text('/metrics'), Date.now());
        } catch (err) {
            metrics.available = false;
        }
    }

    function route() {
        const hash = location.hash || '#/';
        if (!hash.startsWith('#/')) {
            return; /* an in-page anchor */
        }
        const parts = hash.slice(2).split('?')[0].split('/').filter(Boolean)
            .map((part) => {
                try {
                    return decodeURIComponent(part);
                } catch (err) {
                    return part;
                }
            });
        let view;
        if (parts.length === 0) {
            view = overviewView();
        } else if (parts[0] === 'new' && parts.length === 1) {
            view = editorView(null);
        } else if (parts[0] === 'connectors' && parts.length === 2) {
            view = connectorView(parts[1]);
        } else if (parts[0] === 'connectors' && parts.length === 3 && parts[2] === 'edit') {
            view = editorView(parts[1]);
        } else {
            view = notFoundView();
        }
        if (current && current.destroy) {
            current.destroy();
        }
        const dialog = $('dialog');
        if (dialog.open) {
            dialog.close();
        }
        current = view;
        const main = $('main');
        main.replaceChildren(view.element);
        document.title = `${view.title} · tributary`;
        for (const link of document.querySelectorAll('.top nav a')) {
            if (link.getAttribute('href') === view.nav) {
                link.setAttribute('aria-current', 'page');
            } else {
                link.removeAttribute('aria-current');
            }
        }
        /* after a navigation, focus and screen readers start at the new
         * page's heading; not on the first load */
        const title = main.querySelector('h1');
        if (title && routedOnce) {
            title.focus();
        }
        routedOnce = true;
        if (view.start) {
            view.start();
        }
        schedule(0);
    }
    let routedOnce = false;

    function heading(text) {
        return h('h1', {tabindex: '-1', text});
    }

    function notFoundView() {
        return {
            title: 'Not found',
            element: h('section', null, heading('Not found'),
                       h('p', null, 'No page here. ', h('a', {href: '#/', text: 'See every connector'}), '.')),
        };
    }

    /* ------------------------------------------------------------------
     * Overview: every connector.
     */

    const overviewFilter = {text: '', state: ''};

    function overviewView() {
        const summary = h('p', {class: 'summary', 'aria-live': 'polite'});
        const search = h('input', {
            type: 'search', id: 'filter-name', value: overviewFilter.text,
            placeholder: 'part of a name', autocomplete: 'off', spellcheck: 'false',
        });
        const stateSelect = h('select', {id: 'filter-state'},
            h('option', {value: '', text: 'every state'}),
            STATES.map((s) => h('option', {value: s, text: s === 'FAILED'
                ? 'FAILED (connector or a task)' : s})));
        stateSelect.value = overviewFilter.state;
        const tbody = h('tbody');
        const empty = h('p', {class: 'empty', hidden: true});
        const table = h('table', {class: 'connectors responsive'},
            h('caption', {class: 'visually-hidden', text: 'Connectors'}),
            h('thead', null, h('tr', null,
                h('th', {scope: 'col', text: 'Name'}),
                h('th', {scope: 'col', text: 'Type'}),
                h('th', {scope: 'col', text: 'Class'}),
                h('th', {scope: 'col', text: 'State'}),
                h('th', {scope: 'col', text: 'Tasks'}),
                h('th', {scope: 'col', class: 'num', title: 'Records read per second: consumed from Kafka by a sink, polled from its plugin by a source'}, 'In/s'),
                h('th', {scope: 'col', class: 'num', title: 'Records written per second: taken by a sink plugin, acknowledged by Kafka for a source'}, 'Out/s'),
                h('th', {scope: 'col', class: 'num', title: 'Sink lag: end offset minus committed offset, summed over partitions'}, 'Lag'),
                h('th', {scope: 'col', text: 'Errors'}))),
            tbody);
        const rows = new Map();
        let data = [];

        function matches(item) {
            const text = overviewFilter.text.trim().toLowerCase();
            if (text && !item.name.toLowerCase().includes(text)) {
                return false;
            }
            const wanted = overviewFilter.state;
            if (!wanted) {
                return true;
            }
            const status = item.status || {};
            const state = status.connector && status.connector.state;
            if (wanted === 'FAILED') {
                return state === 'FAILED' ||
                       (status.tasks || []).some((t) => t.state === 'FAILED');
            }
            return state === wanted;
        }

        function cell(label, cls) {
            return h('td', {class: cls || null, dataset: {label}});
        }

        function row(name) {
            if (rows.has(name)) {
                return rows.get(name);
            }
            const cells = {
                name: cell('Name', 'name'),
                type: cell('Type'),
                cls: cell('Class'),
                state: cell('State'),
                tasks: cell('Tasks'),
                in: cell('In/s', 'num'),
                out: cell('Out/s', 'num'),
                lag: cell('Lag', 'num'),
                errors: cell('Errors'),
            };
            cells.name.appendChild(h('a', {href: `#/connectors/${enc(name)}`, text: name,
                                           dataset: {focusKey: name}}));
            const tr = h('tr', {dataset: {connector: name}}, Object.values(cells));
            const entry = {tr, cells, sig: {}};
            rows.set(name, entry);
            return entry;
        }

        function set(entry, key, signature, build) {
            if (entry.sig[key] === signature) {
                return;
            }
            entry.sig[key] = signature;
            entry.cells[key].replaceChildren();
            append(entry.cells[key], [build()]);
        }

        function taskChips(tasks) {
            if (!tasks || tasks.length === 0) {
                return [h('span', {class: 'muted', text: 'none'})];
            }
            const counts = new Map();
            for (const t of tasks) {
                counts.set(t.state, (counts.get(t.state) || 0) + 1);
            }
            return [...counts].map(([state, n]) =>
                h('span', {class: `chip state-${state.toLowerCase()}`,
                           title: `${n} task${n === 1 ? '' : 's'} ${state}`},
                  `${n} ${state.toLowerCase()}`));
        }

        function errorText(item, m) {
            const failed = ((item.status && item.status.tasks) || [])
                .filter((t) => t.state === 'FAILED').length;
            const parts = [];
            if (item.status && item.status.connector && item.status.connector.state === 'FAILED') {
                parts.push('connector failed');
            }
            if (failed) {
                parts.push(`${failed} failed task${failed === 1 ? '' : 's'}`);
            }
            if (m.dlq) {
                parts.push(`${formatCount(m.dlq)} DLQ`);
            }
            if (m.dropped) {
                parts.push(`${formatCount(m.dropped)} dropped`);
            }
            if (m.delivery) {
                parts.push(`${formatCount(m.delivery)} not delivered`);
            }
            return parts;
        }

        function render() {
            let shown = 0;
            const names = new Set(data.map((item) => item.name));
            for (const [name, entry] of rows) {
                if (!names.has(name)) {
                    entry.tr.remove();
                    rows.delete(name);
                }
            }
            const counts = new Map();
            for (const item of data) {
                const entry = row(item.name);
                const status = item.status || {connector: {}, tasks: []};
                const info = item.info || {config: {}};
                const state = status.connector && status.connector.state;
                const type = info.type || status.type || '';
                const cls = (info.config && info.config['connector.class']) || '';
                const m = metrics.of(item.name);
                counts.set(state, (counts.get(state) || 0) + 1);
                set(entry, 'type', type, () => type);
                set(entry, 'cls', cls, () => h('span', {title: cls, text: shortClass(cls)}));
                set(entry, 'state', state, () => stateBadge(state));
                set(entry, 'tasks', JSON.stringify(status.tasks.map((t) => t.state)),
                    () => taskChips(status.tasks));
                set(entry, 'in', formatRate(m.readRate), () => formatRate(m.readRate));
                set(entry, 'out', formatRate(m.writeRate), () => formatRate(m.writeRate));
                const lag = type === 'sink' ? formatCount(m.lag) : '—';
                set(entry, 'lag', lag, () => (type === 'sink' ? lag
                    : h('span', {class: 'muted', title: 'Only sinks have consumer lag', text: '—'})));
                const errors = errorText(item, m);
                set(entry, 'errors', errors.join(' · '), () => (errors.length
                    ? h('span', {class: 'bad', text: errors.join(' · ')})
                    : h('span', {class: 'muted', text: 'none'})));
                entry.tr.hidden = !matches(item);
                shown += entry.tr.hidden ? 0 : 1;
                tbody.appendChild(entry.tr); /* keeps the sorted order */
            }
            const byState = STATES.filter((s) => counts.get(s))
                .map((s) => `${counts.get(s)} ${s.toLowerCase()}`).join(', ');
            summary.textContent = data.length === 0 ? '' :
                `${data.length} connector${data.length === 1 ? '' : 's'}` +
                (byState ? ` (${byState})` : '') +
                (shown !== data.length ? `; ${shown} shown` : '');
            empty.hidden = shown !== 0;
            table.hidden = shown === 0;
            if (data.length === 0) {
                empty.replaceChildren('No connectors yet. ',
                                      h('a', {href: '#/new', text: 'Create one'}), '.');
            } else {
                empty.replaceChildren('No connector matches the filter.');
            }
        }

        search.addEventListener('input', () => {
            overviewFilter.text = search.value;
            render();
        });
        stateSelect.addEventListener('change', () => {
            overviewFilter.state = stateSelect.value;
            render();
        });

        const element = h('section', {class: 'overview'},
            h('div', {class: 'title-row'}, heading('Connectors'),
              h('a', {class: 'button primary', href: '#/new', text: 'New connector'})),
            h('form', {class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault()},
              h('span', {class: 'filter'}, h('label', {for: 'filter-name'}, 'Name'), search),
              h('span', {class: 'filter'}, h('label', {for: 'filter-state'}, 'State'), stateSelect)),
            summary,
            h('div', {class: 'table-wrap'}, table),
            empty);
        table.hidden = true;

        return {
            title: 'Connectors',
            nav: '#/',
            element,
            async refresh() {
                const [expanded] = await Promise.all([
                    api.get('/connectors?expand=status&expand=info'), scrape()]);
                data = Object.entries(expanded || {})
                    .map(([name, parts]) => ({name, status: parts.status, info: parts.info}))
                    .sort((a, b) => a.name.localeCompare(b.name));
                for (const item of data) {
                    if (item.status) {
                        errorLog.noteStatus(item.status);
                    }
                }
                render();
            },
            failed(err) {
                summary.textContent = `Could not load the connectors: ${err.message}`;
            },
        };
    }

    /* ------------------------------------------------------------------
     * One connector.
     */

    function connectorView(name) {
        const stateHolder = h('span', {class: 'head-state'});
        const meta = h('p', {class: 'meta'});
        const notice = h('p', {class: 'notice', hidden: true, role: 'alert'});
        let status = null;
        let info = null;
        let offsets = null;
        let gone = false;

        /* Actions. Buttons that do not apply in the current state are
         * aria-disabled, so they keep their place in the tab order. */
        const includeTasks = h('input', {type: 'checkbox', id: 'restart-include-tasks'});
        const onlyFailed = h('input', {type: 'checkbox', id: 'restart-only-failed'});
        const buttons = {
            pause: h('button', {type: 'button', text: 'Pause', onclick: () => act('pause')}),
            resume: h('button', {type: 'button', text: 'Resume', onclick: () => act('resume')}),
            stop: h('button', {type: 'button', text: 'Stop', onclick: () => act('stop')}),
            restart: h('button', {type: 'button', text: 'Restart', onclick: () => act('restart')}),
            edit: h('a', {class: 'button', href: `#/connectors/${enc(name)}/edit`, text: 'Edit'}),
            remove: h('button', {type: 'button', class: 'danger', text: 'Delete…',
                                 onclick: () => confirmDelete()}),
        };
        const resetButton = h('button', {type: 'button', text: 'Reset offsets…',
                                         onclick: () => resetOffsets()});
        const resetNote = h('span', {class: 'muted', id: 'reset-note'});
        resetButton.setAttribute('aria-describedby', 'reset-note');

        function enable(button, on) {
            if (on) {
                button.removeAttribute('aria-disabled');
            } else {
                button.setAttribute('aria-disabled', 'true');
            }
        }

        function connectorState() {
            return status && status.connector ? status.connector.state : null;
        }

        async function act(what) {
            const button = buttons[what];
            if (button.getAttribute('aria-disabled') === 'true') {
                return;
            }
            try {
                if (what === 'restart') {
                    const query = `?includeTasks=${includeTasks.checked}&onlyFailed=${onlyFailed.checked}`;
                    await api.post(connectorPath(name, `/restart${query}`));
                    toast(`Restart of ${name} requested`);
                } else {
                    await api.put(connectorPath(name, `/${what}`));
                    toast({pause: `Pausing ${name}`, resume: `Resuming ${name}`,
                           stop: `Stopped ${name}`}[what]);
                }
            } catch (err) {
                toast(`${what} failed: ${err.message}`, 'error');
            }
            refreshSoon();
        }

        async function restartTask(id) {
            try {
                await api.post(connectorPath(name, `/tasks/${id}/restart`));
                toast(`Restart of task ${id} requested`);
            } catch (err) {
                toast(`Restarting task ${id} failed: ${err.message}`, 'error');
            }
            refreshSoon();
        }

        async function confirmDelete() {
            const choice = await openDialog(`Delete ${name}?`, [
                h('p', null, 'The connector and its tasks stop, and its configuration is removed. This cannot be undone.'),
            ], [
                {label: 'Cancel', value: null, autofocus: true},
                {label: `Delete ${name}`, value: 'delete', class: 'danger'},
            ]);
            if (choice !== 'delete') {
                return;
            }
            try {
                await api.del(connectorPath(name));
                toast(`Deleted ${name}`);
                location.hash = '#/';
            } catch (err) {
                toast(`Delete failed: ${err.message}`, 'error');
            }
        }

        function describeOffset(entry) {
            if (entry.partition && 'kafka_topic' in entry.partition) {
                return {
                    partition: `${entry.partition.kafka_topic} / ${entry.partition.kafka_partition}`,
                    offset: entry.offset && 'kafka_offset' in entry.offset
                        ? String(entry.offset.kafka_offset) : JSON.stringify(entry.offset),
                };
            }
            return {partition: JSON.stringify(entry.partition), offset: JSON.stringify(entry.offset)};
        }

        /* The preview is what DELETE /connectors/NAME/offsets removes: every
         * offset GET /connectors/NAME/offsets shows. */
        async function resetOffsets() {
            if (resetButton.getAttribute('aria-disabled') === 'true') {
                return;
            }
            let current;
            try {
                current = (await api.get(connectorPath(name, '/offsets'))).offsets || [];
            } catch (err) {
                toast(`Could not read the offsets: ${err.message}`, 'error');
                return;
            }
            const type = info ? info.type : '';
            const body = [
                h('p', null, `${name} is STOPPED. Resetting removes every offset below, in the store`,
                  type === 'sink' ? ' and in its consumer group' : '', '.'),
                h('p', null, type === 'sink'
                    ? 'When resumed, each partition starts where auto.offset.reset says (earliest unless overridden).'
                    : 'When resumed, the connector starts as if it had never run.'),
            ];
            if (current.length === 0) {
                body.push(h('p', {class: 'muted', text: 'There are no offsets to reset.'}));
            } else {
                body.push(h('div', {class: 'table-wrap'}, h('table', {class: 'preview'},
                    h('caption', {text: `${current.length} offset${current.length === 1 ? '' : 's'} will change`}),
                    h('thead', null, h('tr', null,
                        h('th', {scope: 'col', text: type === 'sink' ? 'Topic / partition' : 'Partition'}),
                        h('th', {scope: 'col', text: 'Current offset'}),
                        h('th', {scope: 'col', text: 'After reset'}))),
                    h('tbody', null, current.map((entry) => {
                        const d = describeOffset(entry);
                        return h('tr', null, h('td', null, h('code', {text: d.partition})),
                                 h('td', {class: 'num', text: d.offset}),
                                 h('td', {class: 'bad', text: 'removed'}));
                    })))));
            }
            const choice = await openDialog(`Reset the offsets of ${name}`, body, [
                {label: 'Cancel', value: null, autofocus: true},
                {label: current.length ? `Reset ${current.length} offset${current.length === 1 ? '' : 's'}` : 'Nothing to reset',
                 value: 'reset', class: 'danger', disabled: current.length === 0},
            ]);
            if (choice !== 'reset') {
                return;
            }
            try {
                const answer = await api.del(connectorPath(name, '/offsets'));
                toast(answer && answer.message ? answer.message : 'Offsets reset');
            } catch (err) {
                toast(`Reset failed: ${err.message}`, 'error');
            }
            refreshSoon();
        }

        /* Sections, each rebuilt only when what it shows changed. */
        const statusBox = h('div');
        const activityBox = h('div', {class: 'stats'});
        const offsetsBox = h('div');
        const errorsBox = h('div');
        const configBox = h('div');

        /* A one-line trace as it is; a longer one as its first line that
         * opens to the whole text. */
        function traceDetails(key, trace) {
            const text = String(trace);
            if (!text.includes('\n')) {
                return h('p', {class: 'trace-line', text});
            }
            return h('details', {class: 'trace', dataset: {key}},
                h('summary', {text: firstLine(text) || 'trace'}), h('pre', {text}));
        }

        function renderStatus() {
            const c = status.connector || {};
            const tasks = status.tasks || [];
            return [
                h('dl', {class: 'facts'},
                  h('dt', {text: 'Connector'}), h('dd', null, stateBadge(c.state)),
                  h('dt', {text: 'Worker'}), h('dd', {text: c.worker_id || '—'}),
                  h('dt', {text: 'Tasks'}), h('dd', {text: String(tasks.length)})),
                c.trace ? traceDetails('connector', c.trace) : null,
                tasks.length === 0
                    ? h('p', {class: 'muted', text: connectorState() === 'STOPPED'
                        ? 'A stopped connector has no tasks.' : 'No tasks yet.'})
                    : h('div', {class: 'table-wrap'}, h('table', {class: 'tasks responsive'},
                        h('caption', {class: 'visually-hidden', text: 'Tasks'}),
                        h('thead', null, h('tr', null,
                            h('th', {scope: 'col', text: 'Task'}),
                            h('th', {scope: 'col', text: 'State'}),
                            h('th', {scope: 'col', text: 'Worker'}),
                            h('th', {scope: 'col', class: 'num', text: 'Restarts'}),
                            h('th', {scope: 'col', text: 'Trace'}),
                            h('th', {scope: 'col', text: 'Action'}))),
                        h('tbody', null, tasks.map((t) => h('tr', {dataset: {task: t.id}},
                            h('td', {dataset: {label: 'Task'}, text: String(t.id)}),
                            h('td', {dataset: {label: 'State'}}, stateBadge(t.state)),
                            h('td', {dataset: {label: 'Worker'}, text: t.worker_id || '—'}),
                            h('td', {class: 'num', dataset: {label: 'Restarts'}, text: String(t.restarts || 0)}),
                            h('td', {dataset: {label: 'Trace'}}, t.trace
                                ? traceDetails(`task-${t.id}`, t.trace) : h('span', {class: 'muted', text: 'none'})),
                            h('td', {dataset: {label: 'Action'}}, h('button', {
                                type: 'button', class: 'small', text: `Restart task ${t.id}`,
                                dataset: {focusKey: `restart-${t.id}`},
                                onclick: () => restartTask(t.id)}))))))),
            ];
        }

        const stats = {};
        function stat(key, label, hint) {
            const value = h('dd', {text: '—'});
            stats[key] = value;
            return h('div', {class: 'stat', title: hint || null}, h('dt', {text: label}), value);
        }
        activityBox.append(
            stat('in', 'In / s', 'Records read per second'),
            stat('out', 'Out / s', 'Records written per second'),
            stat('read', 'Read', 'Records read since the tasks started'),
            stat('written', 'Written', 'Records written since the tasks started'),
            stat('lag', 'Lag', 'End offset minus committed offset, summed over partitions'),
            stat('dlq', 'Dead letter queue', 'Records sent to the dead letter queue'),
            stat('dropped', 'Dropped', 'Records skipped under errors.tolerance=all'),
            stat('conversion', 'Conversion errors', 'Records a converter refused'),
            stat('delivery', 'Not delivered', 'Source records Kafka did not acknowledge'),
            stat('restarts', 'Task restarts', 'Restarts of the tasks, automatic or asked for'));
        activityBox.setAttribute('role', 'list');

        function renderActivity(m) {
            const values = {
                in: formatRate(m.readRate), out: formatRate(m.writeRate),
                read: formatCount(m.tasks ? m.read : null),
                written: formatCount(m.tasks ? m.written : null),
                lag: info && info.type === 'sink' ? formatCount(m.lag) : '—',
                dlq: formatCount(m.dlq), dropped: formatCount(m.dropped),
                conversion: formatCount(m.conversion), delivery: formatCount(m.delivery),
                restarts: formatCount(m.restarts),
            };
            for (const [key, text] of Object.entries(values)) {
                if (stats[key].textContent !== text) {
                    stats[key].textContent = text;
                }
                const bad = ['dlq', 'dropped', 'conversion', 'delivery'].includes(key) && text !== '0' && text !== '—';
                stats[key].classList.toggle('bad', bad);
            }
        }

        function renderOffsets(m) {
            const list = (offsets && offsets.offsets) || [];
            const type = info ? info.type : status.type;
            const out = [];
            if (type === 'sink') {
                /* stored offsets joined with the partitions the metrics know */
                const rows = new Map();
                for (const entry of list) {
                    const p = entry.partition || {};
                    rows.set(`${p.kafka_topic}\0${p.kafka_partition}`, {
                        topic: p.kafka_topic, partition: p.kafka_partition,
                        stored: entry.offset ? entry.offset.kafka_offset : null,
                    });
                }
                for (const [key, part] of m.partitions) {
                    rows.set(key, Object.assign(rows.get(key) || {}, part));
                }
                const sorted = [...rows.values()].sort((a, b) =>
                    String(a.topic).localeCompare(String(b.topic)) || a.partition - b.partition);
                if (sorted.length === 0) {
                    out.push(h('p', {class: 'muted', text: 'No offsets recorded and no partition assigned yet.'}));
                } else {
                    out.push(h('div', {class: 'table-wrap'}, h('table', {class: 'partitions responsive'},
                        h('caption', {class: 'visually-hidden', text: 'Partitions'}),
                        h('thead', null, h('tr', null,
                            h('th', {scope: 'col', text: 'Topic'}),
                            h('th', {scope: 'col', class: 'num', text: 'Partition'}),
                            h('th', {scope: 'col', class: 'num', title: 'The offset recorded in the store (GET offsets)', text: 'Stored offset'}),
                            h('th', {scope: 'col', class: 'num', text: 'Position'}),
                            h('th', {scope: 'col', class: 'num', text: 'End offset'}),
                            h('th', {scope: 'col', class: 'num', text: 'Lag'}))),
                        h('tbody', null, sorted.map((r) => h('tr', null,
                            h('td', {dataset: {label: 'Topic'}}, h('code', {text: r.topic}),
                              r.stopped ? h('span', {class: 'badge state-failed', text: `stopped: ${r.stopped}`}) : null),
                            h('td', {class: 'num', dataset: {label: 'Partition'}, text: String(r.partition)}),
                            h('td', {class: 'num', dataset: {label: 'Stored offset'}, text: formatCount(r.stored)}),
                            h('td', {class: 'num', dataset: {label: 'Position'}, text: formatCount(r.position)}),
                            h('td', {class: 'num', dataset: {label: 'End offset'}, text: formatCount(r.end)}),
                            h('td', {class: 'num lag', dataset: {label: 'Lag'}, text: formatCount(r.lag)})))))));
                    out.push(h('p', {class: 'muted small', text: 'Position, end offset and lag come from /metrics while a task runs; the stored offset from the offsets API.'}));
                }
            } else if (list.length === 0) {
                out.push(h('p', {class: 'muted', text: 'No offsets recorded yet.'}));
            } else {
                out.push(h('div', {class: 'table-wrap'}, h('table', {class: 'partitions'},
                    h('caption', {class: 'visually-hidden', text: 'Source offsets'}),
                    h('thead', null, h('tr', null,
                        h('th', {scope: 'col', text: 'Source partition'}),
                        h('th', {scope: 'col', text: 'Offset'}))),
                    h('tbody', null, list.map((entry) => h('tr', null,
                        h('td', null, h('code', {text: JSON.stringify(entry.partition)})),
                        h('td', null, h('code', {text: JSON.stringify(entry.offset)}))))))));
            }
            return out;
        }

        function renderErrors() {
            const entries = errorLog.of(name);
            if (entries.length === 0) {
                return h('p', {class: 'muted', text: 'No errors seen since this page was opened.'});
            }
            return h('ol', {class: 'errors'}, entries.map((e, i) => h('li', null,
                h('time', {text: clock(e.time)}), ' ', h('strong', {text: e.where}), ' ',
                e.detail ? traceDetails(`err-${entries.length - i}`, e.detail) : h('span', {text: e.message}))));
        }

        function renderConfig() {
            const config = (info && info.config) || {};
            const keys = Object.keys(config).sort();
            return h('div', {class: 'table-wrap'}, h('table', {class: 'config'},
                h('caption', {class: 'visually-hidden', text: 'Configuration'}),
                h('thead', null, h('tr', null, h('th', {scope: 'col', text: 'Key'}),
                                   h('th', {scope: 'col', text: 'Value'}))),
                h('tbody', null, keys.map((key) => h('tr', null,
                    h('th', {scope: 'row'}, h('code', {text: key})),
                    h('td', null, config[key] === HIDDEN
                        ? h('span', {class: 'badge secret', title: 'A PASSWORD value: the API never shows it', text: 'hidden'})
                        : h('code', {class: 'value', text: config[key]})))))));
        }

        function render() {
            const state = connectorState();
            rebuild(stateHolder, String(state), () => stateBadge(state));
            const cls = info && info.config ? info.config['connector.class'] : '';
            meta.replaceChildren(h('span', {text: (info && info.type) || status.type || ''}), ' · ',
                                 h('code', {title: cls, text: cls}));
            enable(buttons.pause, state !== 'PAUSED' && state !== 'STOPPED');
            enable(buttons.resume, state === 'PAUSED' || state === 'STOPPED');
            enable(buttons.stop, state !== 'STOPPED');
            enable(resetButton, state === 'STOPPED');
            resetNote.textContent = state === 'STOPPED'
                ? 'Shows what will change before anything is reset.'
                : 'Stop the connector to reset its offsets.';
            const m = metrics.of(name);
            rebuild(statusBox, JSON.stringify(status), renderStatus);
            renderActivity(m);
            rebuild(offsetsBox, JSON.stringify([offsets, info && info.type, [...m.partitions]]),
                    () => renderOffsets(m));
            rebuild(errorsBox, JSON.stringify(errorLog.of(name)), renderErrors);
            rebuild(configBox, JSON.stringify(info && info.config), renderConfig);
        }

        const body = h('div', {class: 'connector-body'},
            h('div', {class: 'toolbar', role: 'group', 'aria-label': 'Actions'},
              buttons.pause, buttons.resume, buttons.stop,
              h('span', {class: 'restart-group'}, buttons.restart,
                h('label', null, includeTasks, ' include tasks'),
                h('label', null, onlyFailed, ' only failed')),
              buttons.edit, buttons.remove),
            h('section', {'aria-labelledby': 'h-status'}, h('h2', {id: 'h-status', text: 'Status'}), statusBox),
            h('section', {'aria-labelledby': 'h-activity'}, h('h2', {id: 'h-activity', text: 'Activity'}), activityBox),
            h('section', {'aria-labelledby': 'h-offsets'},
              h('div', {class: 'title-row'}, h('h2', {id: 'h-offsets', text: 'Offsets and lag'}),
                h('span', {class: 'reset'}, resetButton, resetNote)),
              offsetsBox),
            h('section', {'aria-labelledby': 'h-errors'}, h('h2', {id: 'h-errors', text: 'Recent errors'}), errorsBox),
            h('section', {'aria-labelledby': 'h-config'},
              h('div', {class: 'title-row'}, h('h2', {id: 'h-config', text: 'Configuration'}),
                h('a', {href: `#/connectors/${enc(name)}/edit`, text: 'Edit configuration'})),
              configBox));
        body.hidden = true;

        const element = h('section', {class: 'connector'},
            h('p', {class: 'crumbs'}, h('a', {href: '#/', text: 'Connectors'}), ' / '),
            h('div', {class: 'title-row'}, heading(name), stateHolder),
            meta, notice, body);

        return {
            title: name,
            nav: null,
            element,
            async refresh() {
                if (gone) {
                    return;
                }
                let results;
                try {
                    results = await Promise.all([
                        api.get(connectorPath(name, '/status')),
                        api.get(connectorPath(name)),
                        api.get(connectorPath(name, '/offsets')).catch(() => null),
                        scrape(),
                    ]);
                } catch (err) {
                    if (err.status === 404) {
                        gone = true;
                        body.hidden = true;
                        notice.hidden = false;
                        notice.replaceChildren(`There is no connector named ${name}. `,
                                               h('a', {href: '#/', text: 'See every connector'}), '.');
                        return;
                    }
                    throw err;
                }
                [status, info, offsets] = results;
                errorLog.noteStatus(status);
                notice.hidden = true;
                body.hidden = false;
                render();
            },
            failed(err) {
                notice.hidden = false;
                notice.textContent = `Could not refresh: ${err.message}`;
            },
        };
    }

    /* ------------------------------------------------------------------
     * Create and edit: a form generated from the plugin's configuration
     * keys, validated as you type, or raw JSON.
     */

    const NUMERIC = {INT: 'numeric', SHORT: 'numeric', LONG: 'numeric', DOUBLE: 'decimal'};

    function slug(text) {
        return String(text).replace(/[^a-zA-Z0-9_-]/g, '_');
    }

    function editorView(name) {
        const editing = name !== null;
        let plugins = [];
        let plugin = null; /* the connector.class the form is for */
        let defs = []; /* ConfigKeyInfo of the plugin */
        let original = {}; /* the stored config, when editing */
        const fields = new Map(); /* key -> {def, input, errors, wrapper, group} */
        let extras = []; /* {key, value} for keys the plugin does not define */
        const touched = new Set();
        let showAll = editing;
        let mode = 'form';
        let jsonProblem = null;
        let jsonConfig = null;
        let result = null; /* last ConfigInfos */
        let validateTimer = null;
        let validateSeq = 0;
        let destroyed = false;

        const pluginSelect = h('select', {id: 'plugin', required: true});
        const pluginBox = h('div', {class: 'field'},
            h('label', {for: 'plugin'}, 'Connector plugin ', h('abbr', {class: 'req', title: 'required', text: '*'})),
            pluginSelect,
            h('p', {class: 'doc', id: 'plugin-doc', text: 'The form below lists the keys this plugin accepts.'}));
        pluginSelect.setAttribute('aria-describedby', 'plugin-doc');
        const initialState = h('select', {id: 'initial-state'},
            ['RUNNING', 'PAUSED', 'STOPPED'].map((s) => h('option', {value: s, text: s})));
        const modeForm = h('button', {type: 'button', 'aria-pressed': 'true', text: 'Form',
                                      onclick: () => setMode('form')});
        const modeJson = h('button', {type: 'button', 'aria-pressed': 'false', text: 'JSON',
                                      onclick: () => setMode('json')});
        const summary = h('div', {class: 'validation', id: 'validation', 'aria-live': 'polite', tabindex: '-1'});
        const formBox = h('div', {class: 'groups'});
        const jsonArea = h('textarea', {id: 'raw-json', rows: '18', spellcheck: 'false',
                                        'aria-describedby': 'raw-json-doc raw-json-error'});
        const jsonError = h('p', {class: 'err', id: 'raw-json-error'});
        const jsonBox = h('div', {class: 'json-mode', hidden: true},
            h('label', {for: 'raw-json', text: 'Configuration as JSON'}),
            h('p', {class: 'doc', id: 'raw-json-doc', text: 'A flat object of strings, as PUT /connectors/{name}/config takes it. Keys you add here that the form does not know show up under "Other keys".'}),
            jsonArea, jsonError);
        const submitButton = h('button', {type: 'submit', class: 'primary',
                                          text: editing ? 'Save changes' : 'Create connector'});
        const formElement = h('form', {class: 'editor', novalidate: true, onsubmit: (e) => submit(e)},
            editing ? null : pluginBox,
            h('div', {class: 'mode', role: 'group', 'aria-label': 'Edit as'}, modeForm, modeJson),
            summary, formBox, jsonBox,
            h('div', {class: 'form-buttons'},
              editing ? null : h('span', {class: 'inline-field'},
                  h('label', {for: 'initial-state', text: 'Start as '}), initialState),
              submitButton,
              h('a', {class: 'button', href: editing ? `#/connectors/${enc(name)}` : '#/', text: 'Cancel'})));
        formElement.hidden = !editing;

        /* ---- the configuration the form or the JSON describes */

        function configFromForm() {
            const config = {};
            for (const [key, field] of fields) {
                const value = field.input.value;
                if (field.def.type === 'PASSWORD' && value === '' && original[key] === HIDDEN) {
                    config[key] = HIDDEN; /* unchanged: the PATCH leaves it alone */
                } else if (value !== '') {
                    config[key] = value;
                }
            }
            for (const extra of extras) {
                if (extra.key.trim() !== '') {
                    config[extra.key.trim()] = extra.value;
                }
            }
            config['connector.class'] = plugin;
            if (editing) {
                config.name = name;
            }
            return config;
        }

        function currentConfig() {
            return mode === 'json' ? jsonConfig : configFromForm();
        }

        function fillForm(config) {
            extras = [];
            for (const [key, field] of fields) {
                const value = config[key];
                if (field.def.type === 'PASSWORD' && value === HIDDEN) {
                    field.input.value = '';
                } else {
                    field.input.value = value === undefined ? '' : value;
                }
            }
            for (const [key, value] of Object.entries(config)) {
                if (!fields.has(key) && key !== 'connector.class') {
                    extras.push({key, value});
                }
            }
            renderExtras();
        }

        /* ---- the generated form */

        function fieldFor(def) {
            const id = `f-${slug(def.name)}`;
            const docId = `${id}-doc`;
            const errId = `${id}-err`;
            let input;
            if (def.type === 'BOOLEAN') {
                input = h('select', {id},
                    h('option', {value: '', text: def.default_value !== null
                        ? `default (${def.default_value})` : 'not set'}),
                    h('option', {value: 'true', text: 'true'}),
                    h('option', {value: 'false', text: 'false'}));
            } else {
                const placeholder = def.default_value !== null && def.default_value !== ''
                    ? `default: ${def.default_value}`
                    : def.type === 'LIST' ? 'comma-separated' : '';
                input = h('input', {
                    id, type: def.type === 'PASSWORD' ? 'password' : 'text',
                    inputmode: NUMERIC[def.type] || null, placeholder: placeholder || null,
                    autocomplete: def.type === 'PASSWORD' ? 'new-password' : 'off',
                    spellcheck: 'false', list: `${id}-list`,
                });
            }
            input.name = def.name;
            input.setAttribute('aria-describedby', `${docId} ${errId}`);
            if (def.required) {
                input.setAttribute('aria-required', 'true');
            }
            if (editing && def.name === 'name') {
                input.readOnly = true;
            }
            if (editing && def.type === 'PASSWORD' && original[def.name] === HIDDEN) {
                input.placeholder = 'hidden; leave empty to keep it';
            }
            const errors = h('ul', {class: 'err', id: errId});
            const datalist = h('datalist', {id: `${id}-list`});
            const label = h('label', {for: id},
                def.display_name && def.display_name !== def.name
                    ? [def.display_name, ' ', h('code', {text: def.name})]
                    : h('code', {text: def.name}),
                def.required ? [' ', h('abbr', {class: 'req', title: 'required', text: '*'})] : null);
            const facts = [def.type.toLowerCase(), `${def.importance.toLowerCase()} importance`];
            if (def.default_value !== null && def.default_value !== '') {
                facts.push(`default ${def.default_value}`);
            }
            const wrapper = h('div', {class: `field width-${(def.width || 'NONE').toLowerCase()}`, dataset: {key: def.name}},
                label, input, datalist,
                h('p', {class: 'doc', id: docId}, def.documentation || '',
                  h('span', {class: 'facts', text: ` (${facts.join(', ')})`})),
                errors);
            const onInput = () => {
                touched.add(def.name);
                scheduleValidate();
            };
            input.addEventListener('input', onInput);
            input.addEventListener('change', onInput);
            return {def, input, errors, wrapper, datalist};
        }

        function groupOrder(names) {
            /* Common first, then the plugin's own groups (its keys come
             * first in the listing), then the rest as listed. */
            return names.slice().sort((a, b) => (a === 'Common' ? -1 : b === 'Common' ? 1 : 0));
        }

        function buildForm() {
            fields.clear();
            const groups = new Map();
            for (const def of defs) {
                if (def.name === 'connector.class') {
                    continue;
                }
                const group = def.group || 'Other';
                if (!groups.has(group)) {
                    groups.set(group, []);
                }
                groups.get(group).push(def);
            }
            const own = defs.length ? defs[0].group : null;
            const nodes = [];
            for (const group of groupOrder([...groups.keys()])) {
                const list = groups.get(group).sort((a, b) =>
                    (a.order < 0 ? 1e9 : a.order) - (b.order < 0 ? 1e9 : b.order) || a.name.localeCompare(b.name));
                const items = list.map((def) => {
                    const field = fieldFor(def);
                    field.group = group;
                    fields.set(def.name, field);
                    return field.wrapper;
                });
                const open = group === 'Common' || group === own ||
                             list.some((d) => d.required || d.importance === 'HIGH');
                const details = h('details', {class: 'group', open, dataset: {group}},
                    h('summary', null, h('span', {class: 'group-name', text: group}),
                      h('span', {class: 'muted', text: ` ${list.length} key${list.length === 1 ? '' : 's'}`})),
                    h('div', {class: 'group-fields'}, items));
                nodes.push(details);
            }
            nodes.push(h('details', {class: 'group', open: true, dataset: {group: 'other'}},
                h('summary', null, h('span', {class: 'group-name', text: 'Other keys'})),
                h('p', {class: 'doc', text: 'Keys this plugin does not list, such as consumer.override.*, producer.override.* or transforms.*.'}),
                extrasBox,
                h('button', {type: 'button', class: 'small', text: 'Add a key', onclick: () => {
                    extras.push({key: '', value: ''});
                    renderExtras();
                    const inputs = extrasBox.querySelectorAll('input.extra-key');
                    inputs[inputs.length - 1].focus();
                }})));
            formBox.replaceChildren(...nodes);
        }

        const extrasBox = h('div', {class: 'extras'});
        function renderExtras() {
            extrasBox.replaceChildren(...extras.map((extra, i) => {
                const key = h('input', {class: 'extra-key', value: extra.key, 'aria-label': `Key ${i + 1}`,
                                        spellcheck: 'false', placeholder: 'key'});
                const value = h('input', {class: 'extra-value', value: extra.value,
                                          'aria-label': `Value of key ${i + 1}`, spellcheck: 'false', placeholder: 'value'});
                key.addEventListener('input', () => {
                    extra.key = key.value;
                    touched.add(extra.key);
                    scheduleValidate();
                });
                value.addEventListener('input', () => {
                    extra.value = value.value;
                    touched.add(extra.key);
                    scheduleValidate();
                });
                return h('div', {class: 'extra-row'}, key, value,
                    h('button', {type: 'button', class: 'small', 'aria-label': `Remove key ${i + 1}`, text: 'Remove',
                                 onclick: () => {
                                     extras.splice(i, 1);
                                     renderExtras();
                                     scheduleValidate();
                                 }}));
            }));
        }

        /* ---- validation through PUT /connector-plugins/{p}/config/validate */

        function scheduleValidate() {
            clearTimeout(validateTimer);
            validateTimer = setTimeout(validate, VALIDATE_DELAY_MS);
        }

        async function validate() {
            clearTimeout(validateTimer);
            const seq = ++validateSeq;
            const config = currentConfig();
            if (!config) {
                renderSummary();
                return;
            }
            const cls = config['connector.class'] || plugin;
            /* A secret left as it is stored reads "[hidden]"; the PATCH keeps
             * the stored value, so it is not validated: leave it out, and
             * its "missing" error with it. */
            const kept = Object.keys(config).filter((key) =>
                config[key] === HIDDEN && original[key] === HIDDEN);
            const body = Object.assign({}, config);
            for (const key of kept) {
                delete body[key];
            }
            let answer;
            try {
                answer = await api.put(`/connector-plugins/${enc(cls)}/config/validate`, body);
            } catch (err) {
                if (seq === validateSeq && !destroyed) {
                    result = {error_count: 1, configs: [], problem: err.message};
                    renderSummary();
                }
                return;
            }
            if (seq !== validateSeq || destroyed) {
                return; /* a newer validation is on its way */
            }
            for (const item of answer.configs || []) {
                if (item.value && kept.includes(item.value.name)) {
                    item.value.errors = [];
                }
            }
            result = answer;
            applyValidation();
        }

        function problems() {
            const list = [];
            if (!result) {
                return list;
            }
            if (result.problem) {
                list.push({key: null, message: result.problem});
            }
            for (const item of result.configs || []) {
                const value = item.value || {};
                const key = (item.definition && item.definition.name) || value.name;
                for (const message of value.errors || []) {
                    list.push({key, message});
                }
            }
            return list;
        }

        function applyValidation() {
            const byKey = new Map();
            for (const item of result.configs || []) {
                const value = item.value;
                if (value) {
                    byKey.set(value.name, value);
                }
            }
            for (const [key, field] of fields) {
                const value = byKey.get(key) || {errors: [], recommended_values: [], visible: true};
                const shown = showAll || touched.has(key) || field.input.value !== '';
                const errors = shown ? value.errors || [] : [];
                field.errors.replaceChildren(...errors.map((e) => h('li', {text: e})));
                field.wrapper.classList.toggle('invalid', errors.length > 0);
                if (errors.length) {
                    field.input.setAttribute('aria-invalid', 'true');
                } else {
                    field.input.removeAttribute('aria-invalid');
                }
                field.wrapper.hidden = value.visible === false;
                const recommended = value.recommended_values || [];
                if (field.datalist.childElementCount !== recommended.length) {
                    field.datalist.replaceChildren(...recommended.map((r) => h('option', {value: r})));
                }
            }
            renderSummary();
        }

        function focusField(key) {
            const field = fields.get(key);
            if (mode !== 'form' || !field) {
                return;
            }
            const details = field.wrapper.closest('details');
            if (details) {
                details.open = true;
            }
            field.input.focus();
        }

        function renderSummary() {
            if (mode === 'json' && jsonProblem) {
                summary.className = 'validation bad';
                summary.replaceChildren(h('p', {text: 'The JSON is not a configuration yet; see below.'}));
                return;
            }
            if (!result) {
                summary.className = 'validation';
                summary.replaceChildren(h('p', {class: 'muted', text: 'Checking…'}));
                return;
            }
            const list = problems();
            if (list.length === 0) {
                summary.className = 'validation good';
                summary.replaceChildren(h('p', {text: 'The configuration is valid.'}));
                return;
            }
            summary.className = 'validation bad';
            summary.replaceChildren(
                h('p', {text: `${list.length} problem${list.length === 1 ? '' : 's'} to fix` +
                               (editing ? ':' : ' before the connector can be created:')}),
                h('ul', null, list.map((p) => h('li', null,
                    p.key && fields.has(p.key) && mode === 'form'
                        ? h('a', {href: `#f-${slug(p.key)}`, onclick: (e) => {
                            e.preventDefault();
                            focusField(p.key);
                        }}, h('code', {text: p.key}))
                        : p.key ? h('code', {text: p.key}) : null,
                    p.key ? ': ' : '', p.message))));
        }

        /* ---- form and JSON modes */

        function setMode(next) {
            if (next === mode) {
                return;
            }
            if (next === 'json') {
                jsonConfig = configFromForm();
                jsonArea.value = JSON.stringify(jsonConfig, null, 2);
                jsonProblem = null;
                jsonError.textContent = '';
            } else {
                if (jsonProblem) {
                    jsonError.textContent = `${jsonProblem} Fix it before going back to the form.`;
                    jsonArea.focus();
                    return;
                }
                const cls = jsonConfig['connector.class'];
                if (cls && cls !== plugin && !editing) {
                    mode = next;
                    selectPlugin(cls, jsonConfig);
                    updateModeButtons();
                    return;
                }
                fillForm(jsonConfig);
            }
            mode = next;
            updateModeButtons();
            validate();
        }

        function updateModeButtons() {
            modeForm.setAttribute('aria-pressed', String(mode === 'form'));
            modeJson.setAttribute('aria-pressed', String(mode === 'json'));
            formBox.hidden = mode !== 'form';
            jsonBox.hidden = mode !== 'json';
        }

        jsonArea.addEventListener('input', () => {
            let parsed;
            try {
                parsed = JSON.parse(jsonArea.value);
                if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
                    throw new Error('The JSON must be an object.');
                }
                if (parsed.config && typeof parsed.config === 'object') {
                    throw new Error('Write the flat configuration (what "config" holds in a POST /connectors body), not the whole request.');
                }
                for (const [key, value] of Object.entries(parsed)) {
                    if (typeof value !== 'string') {
                        throw new Error(`The value of "${key}" must be a string (write "${value}" in quotes).`);
                    }
                }
                if (editing && parsed.name !== undefined && parsed.name !== name) {
                    throw new Error(`"name" must stay "${name}".`);
                }
            } catch (err) {
                jsonProblem = err instanceof SyntaxError ? `Not JSON: ${err.message}.` : err.message;
                jsonError.textContent = jsonProblem;
                jsonArea.setAttribute('aria-invalid', 'true');
                validateSeq++;
                renderSummary();
                return;
            }
            jsonProblem = null;
            jsonError.textContent = '';
            jsonArea.removeAttribute('aria-invalid');
            jsonConfig = parsed;
            touched.add('*');
            scheduleValidate();
        });

        /* ---- choosing the plugin */

        async function selectPlugin(cls, keep) {
            plugin = cls;
            if (!editing) {
                pluginSelect.value = plugins.some((p) => p.class === cls) ? cls : pluginSelect.value;
            }
            result = null;
            renderSummary();
            try {
                defs = await api.get(`/connector-plugins/${enc(cls)}/config`);
            } catch (err) {
                summary.className = 'validation bad';
                summary.replaceChildren(h('p', {text: `Could not load the keys of ${cls}: ${err.message}`}));
                return;
            }
            if (destroyed || plugin !== cls) {
                return;
            }
            buildForm();
            fillForm(keep || {});
            formElement.hidden = false;
            validate();
        }

        pluginSelect.addEventListener('change', () => {
            if (pluginSelect.value) {
                const keep = mode === 'form' ? configFromForm() : jsonConfig;
                if (keep) {
                    delete keep['connector.class'];
                }
                if (mode === 'json') {
                    mode = 'form';
                    updateModeButtons();
                }
                selectPlugin(pluginSelect.value, keep && keep.name ? {name: keep.name} : {});
            }
        });

        async function start() {
            try {
                if (editing) {
                    original = await api.get(connectorPath(name, '/config'));
                    await selectPlugin(original['connector.class'], original);
                } else {
                    plugins = (await api.get('/connector-plugins'))
                        .filter((p) => p.type === 'source' || p.type === 'sink');
                    pluginSelect.replaceChildren(
                        h('option', {value: '', text: 'Choose a plugin…'}),
                        ...['source', 'sink'].map((type) => h('optgroup', {label: type === 'source' ? 'Sources' : 'Sinks'},
                            plugins.filter((p) => p.type === type).map((p) => h('option', {
                                value: p.class,
                                text: `${shortClass(p.class)}${p.version ? ` ${p.version}` : ''}`,
                            })))));
                    formElement.hidden = false;
                    formBox.replaceChildren(h('p', {class: 'muted', text: 'Choose a plugin to see its configuration.'}));
                    summary.replaceChildren();
                }
            } catch (err) {
                formElement.hidden = false;
                summary.className = 'validation bad';
                summary.replaceChildren(h('p', {text: err.status === 404
                    ? `There is no connector named ${name}.` : `Could not load: ${err.message}`}));
            }
        }

        /* ---- saving */

        async function submit(event) {
            event.preventDefault();
            if (!plugin) {
                pluginSelect.focus();
                return;
            }
            if (mode === 'json' && jsonProblem) {
                jsonArea.focus();
                return;
            }
            showAll = true;
            await validate();
            if (problems().length > 0) {
                summary.focus();
                return;
            }
            const config = currentConfig();
            submitButton.disabled = true;
            try {
                if (editing) {
                    const patch = {};
                    for (const [key, value] of Object.entries(config)) {
                        if (original[key] !== value) {
                            patch[key] = value;
                        }
                    }
                    for (const key of Object.keys(original)) {
                        if (!(key in config)) {
                            patch[key] = null;
                        }
                    }
                    if (Object.keys(patch).length === 0) {
                        toast('Nothing changed');
                    } else {
                        await api.patch(connectorPath(name, '/config'), patch);
                        toast(`Saved ${name}: ${Object.keys(patch).join(', ')}`);
                    }
                    location.hash = `#/connectors/${enc(name)}`;
                } else {
                    const created = await api.post('/connectors', {
                        name: config.name, config, initial_state: initialState.value,
                    });
                    toast(`Created ${created.name}`);
                    location.hash = `#/connectors/${enc(created.name)}`;
                }
            } catch (err) {
                summary.className = 'validation bad';
                summary.replaceChildren(h('p', {role: 'alert', text: `The server refused: ${err.message}`}));
                summary.focus();
            } finally {
                submitButton.disabled = false;
            }
        }

        const element = h('section', {class: 'editor-page'},
            editing ? h('p', {class: 'crumbs'}, h('a', {href: '#/', text: 'Connectors'}), ' / ',
                        h('a', {href: `#/connectors/${enc(name)}`, text: name}), ' / ') : null,
            heading(editing ? `Edit ${name}` : 'New connector'),
            formElement);

        return {
            title: editing ? `Edit ${name}` : 'New connector',
            nav: editing ? null : '#/new',
            element,
            start,
            destroy() {
                destroyed = true;
                clearTimeout(validateTimer);
            },
        };
    }

    /* ------------------------------------------------------------------
     * Start.
     */

    async function serverInfo() {
        try {
            const info = await api.get('/');
            $('server-info').textContent =
                `Kafka Connect REST ${info.version} · tributary ${info.commit}` +
                (info.kafka_cluster_id ? ` · Kafka cluster ${info.kafka_cluster_id}` : '');
        } catch (err) {
            $('server-info').textContent = `Server information unavailable: ${err.message}`;
        }
    }

    $('live').addEventListener('change', () => {
        if (live()) {
            schedule(0);
        }
    });
    document.addEventListener('visibilitychange', () => {
        if (!document.hidden && live()) {
            schedule(0);
        }
    });
    $('skip').addEventListener('click', (event) => {
        event.preventDefault();
        const target = $('main').querySelector('h1') || $('main');
        target.focus();
    });
    window.addEventListener('hashchange', route);
    route();
    serverInfo();
}());
