/*
 * End-to-end tests of the web UI (/ui) in headless Debian chromium, driven
 * by playwright-core, against a real tributary worker on the Kafka test bed.
 *
 *   TRIBUTARY_BIN=build/test/tributary TRIBUTARY_BED_DIR=DIR \
 *       node --test --test-reporter=tap tests/e2e/ui.test.mjs
 *
 * The steps run in order and share one worker and one browser: create a
 * datagen source and a FileStreamSink through the generated form, see them
 * RUNNING, see the sink's lag, pause it and see PAUSED, filter the overview,
 * edit, reset the offsets of the stopped sink after the preview, delete.
 * Screenshots go to tests/artifacts/e2e/. Every request the browser makes is
 * recorded; the last test checks that none left the worker's origin. Every
 * answer the browser and the tests receive, and the worker's log and store,
 * are scanned for the run's secrets (the bed's passwords and the value of
 * the secret the HTTP sink references) when the worker has stopped.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {after, before, describe, test} from 'node:test';
import {fileURLToPath} from 'node:url';

import {chromium} from 'playwright-core';

import {readBed, waitFor, Worker} from './worker.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.resolve(HERE, '..', 'artifacts', 'e2e');
const CHROMIUM = process.env.TRIBUTARY_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
const DATAGEN = 'io.tributary.connect.datagen.DatagenConnector';
const FILE_SINK = 'org.apache.kafka.connect.file.FileStreamSinkConnector';
const UI_TIMEOUT = 30000;

describe('web UI', {timeout: 600000}, () => {
    const run = crypto.randomBytes(4).toString('hex');
    const source = `e2e-gen-${run}`;
    const sink = `e2e-sink-${run}`;
    const topic = `e2e-${run}`;
    const requests = [];
    const pageErrors = [];
    const answers = []; /* promises of the bodies of every answer the browser got */
    const secret = `e2e-secret-${crypto.randomBytes(12).toString('hex')}`;
    let workDir;
    let profileDir;
    let worker;
    let context;
    let page;
    let sinkFile;

    /* The number a cell or stat shows, or NaN for "—". */
    async function numberIn(locator) {
        const text = (await locator.textContent()).trim();
        return text === '—' ? NaN : Number(text.replace(/,/g, ''));
    }

    /* Fails when a secret of the run shows in plain text in any answer the
     * browser or worker.api received, or in the worker's log or store. */
    async function scanForSecrets(logs) {
        const bed = readBed();
        const known = [secret, bed.BED_SCRAM256_PASSWORD, bed.BED_SCRAM512_PASSWORD];
        const texts = {
            'the answers to the browser': (await Promise.all(answers)).join('\n'),
            'the answers to worker.api': worker.answers.join('\n'),
            'the worker log': logs,
        };
        for (const where of [worker.storePath, `${worker.storePath}-wal`]) {
            if (fs.existsSync(where)) {
                texts[where] = fs.readFileSync(where, 'latin1');
            }
        }
        assert.ok(answers.length > 20, `only ${answers.length} answers scanned`);
        const found = [];
        for (const [where, text] of Object.entries(texts)) {
            known.filter((s) => text.includes(s)).forEach((s) =>
                found.push(`${where}: a secret starting ${s.slice(0, 2)}`));
        }
        assert.deepEqual(found, []);
    }

    async function shot(name) {
        await page.screenshot({path: path.join(ARTIFACTS, `${name}.png`), fullPage: true});
    }

    async function openConnector(name) {
        await page.goto(`${worker.url}/ui#/connectors/${encodeURIComponent(name)}`);
        await page.locator('h1', {hasText: name}).waitFor();
    }

    async function headState(expected) {
        await page.locator('.head-state .badge', {hasText: expected})
            .waitFor({timeout: UI_TIMEOUT});
    }

    async function chooseCreateForm(pluginClass) {
        await page.goto(`${worker.url}/ui#/new`);
        await page.locator(`#plugin option[value="${pluginClass}"]`).waitFor({state: 'attached'});
        await page.selectOption('#plugin', pluginClass);
        await page.locator('#f-name').waitFor();
    }

    async function createThroughForm() {
        await page.locator('.validation', {hasText: 'The configuration is valid.'})
            .waitFor({timeout: UI_TIMEOUT});
        await page.getByRole('button', {name: 'Create connector'}).click();
    }

    before(async () => {
        const bed = readBed();
        fs.rmSync(ARTIFACTS, {recursive: true, force: true}); /* no stale screenshots */
        fs.mkdirSync(ARTIFACTS, {recursive: true});
        workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tributary-e2e-'));
        profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tributary-e2e-chromium-'));
        sinkFile = path.join(workDir, 'sink.txt');
        /* lag is the end offset minus what the group committed, and a sink
         * commits at each flush: with the source writing hundreds of records
         * a second, a running sink shows lag between two flushes */
        process.env.E2E_SECRET_VALUE = secret; /* the worker inherits it */
        worker = await new Worker(workDir, {
            'bootstrap.servers': bed.BED_BOOTSTRAP,
            'offset.flush.interval.ms': '3000',
        }).start();
        /* a persistent context on a new, empty --user-data-dir */
        context = await chromium.launchPersistentContext(profileDir, {
            executablePath: CHROMIUM,
            headless: true,
            args: CHROMIUM_FLAGS,
            viewport: {width: 1280, height: 900},
        });
        context.on('request', (request) => requests.push(request.url()));
        context.on('response', (response) => answers.push(response.text().catch(() => '')));
        page = context.pages()[0] || await context.newPage();
        page.on('pageerror', (err) => pageErrors.push(err.message));
        page.on('console', (message) => {
            if (/Content.Security.Policy/i.test(message.text())) {
                pageErrors.push(message.text());
            }
        });
        page.setDefaultTimeout(UI_TIMEOUT);
    });

    after(async () => {
        if (context) {
            await context.close();
        }
        if (worker) {
            const exit = await worker.stop();
            const logs = worker.logs();
            assert.ok(!logs.includes('Sanitizer'), logs);
            assert.deepEqual(exit, {code: 0, signal: null}, logs.slice(-4000));
            await scanForSecrets(logs);
        }
        for (const dir of [profileDir, workDir]) {
            if (dir) {
                fs.rmSync(dir, {recursive: true, force: true});
            }
        }
    });

    test('the UI is served at /ui with its assets', async () => {
        const res = await fetch(`${worker.url}/ui`);
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type'), /^text\/html/);
        const missing = await fetch(`${worker.url}/ui/no-such-file.js`);
        assert.equal(missing.status, 404);
        await page.goto(`${worker.url}/ui`);
        await page.locator('h1', {hasText: 'Connectors'}).waitFor();
        await page.locator('.empty', {hasText: 'No connectors yet'}).waitFor();
    });

    test('creates a datagen source through the generated form and sees it RUNNING', async () => {
        await chooseCreateForm(DATAGEN);
        /* groups, required marks, documentation and defaults come from
         * GET /connector-plugins/{plugin}/config */
        const topicField = page.locator('.field[data-key="topic"]');
        await topicField.locator('abbr.req').waitFor();
        await topicField.locator('.doc', {hasText: 'Topic the records are written to'}).waitFor();
        assert.equal(await page.getAttribute('#f-records_per_second', 'placeholder'), 'default: 10');
        await page.locator('details.group[data-group="Error Handling"] > summary').waitFor();

        /* validated as you type, with the error under its field */
        await page.fill('#f-name', source);
        await page.fill('#f-topic', topic);
        await page.fill('#f-records_per_second', 'fast');
        const rateErrors = page.locator('.field[data-key="records.per.second"] ul.err li');
        await rateErrors.first().waitFor();
        assert.match(await rateErrors.first().textContent(), /records\.per\.second/);
        assert.equal(await page.getAttribute('#f-records_per_second', 'aria-invalid'), 'true');
        await page.fill('#f-records_per_second', '400');
        await rateErrors.first().waitFor({state: 'detached'});
        await shot('create-form');

        await createThroughForm();
        await page.waitForURL(`**/ui#/connectors/${source}`);
        await headState('RUNNING');
        await page.locator('table.tasks tbody tr[data-task="0"] .badge', {hasText: 'RUNNING'})
            .waitFor({timeout: UI_TIMEOUT});
        const stored = await worker.api('GET', `/connectors/${source}/config`);
        assert.equal(stored.body.topic, topic);
        assert.equal(stored.body['records.per.second'], '400');
    });

    test('creates a FileStreamSink through the form and sees it RUNNING', async () => {
        await chooseCreateForm(FILE_SINK);
        await page.fill('#f-name', sink);
        await page.fill('#f-topics', topic);
        await page.fill('#f-file', sinkFile);
        await page.fill('#f-value_converter', 'org.apache.kafka.connect.storage.StringConverter');
        /* the raw JSON mode shows the same configuration */
        await page.getByRole('button', {name: 'JSON'}).click();
        const raw = JSON.parse(await page.inputValue('#raw-json'));
        assert.equal(raw.topics, topic);
        assert.equal(raw['connector.class'], FILE_SINK);
        await page.getByRole('button', {name: 'Form'}).click();
        assert.equal(await page.inputValue('#f-file'), sinkFile);

        await createThroughForm();
        await page.waitForURL(`**/ui#/connectors/${sink}`);
        await headState('RUNNING');
        await waitFor(() => fs.existsSync(sinkFile) && fs.statSync(sinkFile).size > 0,
                      {timeout: 60000, what: 'records in the sink file'});
    });

    test('the overview shows both with records per second from /metrics', async () => {
        await page.goto(`${worker.url}/ui`);
        const row = page.locator(`tr[data-connector="${source}"]`);
        await row.locator('.badge', {hasText: 'RUNNING'}).waitFor();
        await waitFor(async () => (await numberIn(row.locator('td[data-label="Out/s"]'))) > 0,
                      {timeout: UI_TIMEOUT, what: 'the source to show records per second'});
        const sinkRow = page.locator(`tr[data-connector="${sink}"]`);
        await waitFor(async () => (await numberIn(sinkRow.locator('td[data-label="In/s"]'))) > 0,
                      {timeout: UI_TIMEOUT, what: 'the sink to show records per second'});
        assert.equal((await sinkRow.locator('td[data-label="Type"]').textContent()).trim(), 'sink');
        assert.equal((await sinkRow.locator('td[data-label="Class"]').textContent()).trim(),
                     'FileStreamSinkConnector');
        await shot('overview'); /* replaced by the one with lag below */
    });

    test('shows the lag of the running sink, per partition and in the overview', async () => {
        await openConnector(sink);
        await headState('RUNNING');
        try {
            const lag = page.locator('.stat', {hasText: 'Lag'}).locator('dd');
            await waitFor(async () => (await numberIn(lag)) > 0,
                          {timeout: 60000, what: 'the sink\'s lag on its page'});
            const partitionLag = page.locator('table.partitions tbody tr', {hasText: topic})
                .locator('td.lag');
            assert.ok(await numberIn(partitionLag) > 0);
        } finally {
            await shot('connector'); /* also when the lag did not show */
        }

        await page.goto(`${worker.url}/ui`);
        const sinkRow = page.locator(`tr[data-connector="${sink}"]`);
        await waitFor(async () => (await numberIn(sinkRow.locator('td[data-label="Lag"]'))) > 0,
                      {timeout: UI_TIMEOUT, what: 'the sink\'s lag in the overview'});
        const sourceRow = page.locator(`tr[data-connector="${source}"]`);
        await sourceRow.locator('.badge', {hasText: 'RUNNING'}).waitFor();
        await waitFor(async () => (await numberIn(sourceRow.locator('td[data-label="Out/s"]'))) > 0,
                      {timeout: UI_TIMEOUT, what: 'the source\'s rate in the overview'});
        await shot('overview');
    });

    test('pauses the sink and sees PAUSED', async () => {
        await openConnector(sink);
        await headState('RUNNING');
        await page.getByRole('button', {name: 'Pause', exact: true}).click();
        await headState('PAUSED');
        await page.locator('table.tasks tbody tr[data-task="0"] .badge', {hasText: 'PAUSED'})
            .waitFor();
        const status = await worker.api('GET', `/connectors/${sink}/status`);
        assert.equal(status.body.connector.state, 'PAUSED');
    });

    test('filters the overview by name and state, reachable with the keyboard', async () => {
        await page.goto(`${worker.url}/ui`);
        const sourceRow = page.locator(`tr[data-connector="${source}"]`);
        const sinkRow = page.locator(`tr[data-connector="${sink}"]`);
        await sinkRow.waitFor();
        await page.fill('#filter-name', 'e2e-sink');
        await sourceRow.waitFor({state: 'hidden'});
        assert.ok(await sinkRow.isVisible());
        await page.fill('#filter-name', '');
        await page.selectOption('#filter-state', 'PAUSED');
        await sourceRow.waitFor({state: 'hidden'});
        assert.ok(await sinkRow.isVisible());
        await page.selectOption('#filter-state', 'RUNNING');
        await sinkRow.waitFor({state: 'hidden'});
        assert.ok(await sourceRow.isVisible());
        await page.setViewportSize({width: 390, height: 844});
        await page.selectOption('#filter-state', '');
        await sinkRow.waitFor();
        await shot('overview-narrow');
        await page.setViewportSize({width: 1280, height: 900});

        /* from the name filter, Tab reaches the state filter, then the
         * first connector; Enter opens it with its heading focused */
        await page.fill('#filter-name', source);
        await sinkRow.waitFor({state: 'hidden'});
        await page.focus('#filter-name');
        await page.keyboard.press('Tab');
        assert.equal(await page.evaluate(() => document.activeElement.id), 'filter-state');
        await page.keyboard.press('Tab');
        assert.equal(await page.evaluate(() => document.activeElement.textContent), source);
        await page.keyboard.press('Enter');
        await page.waitForURL(`**/ui#/connectors/${source}`);
        await page.waitForFunction((name) => document.activeElement.tagName === 'H1' &&
                                   document.activeElement.textContent === name, source);
        await page.goto(`${worker.url}/ui`);
        await page.fill('#filter-name', '');
    });

    test('edits the source through its form, sending only what changed', async () => {
        await openConnector(source);
        await page.getByRole('link', {name: 'Edit', exact: true}).click();
        await page.waitForURL(`**/ui#/connectors/${source}/edit`);
        await page.locator('#f-name').waitFor();
        assert.equal(await page.inputValue('#f-topic'), topic);
        assert.equal(await page.getAttribute('#f-name', 'readonly'), '');
        await page.fill('#f-records_per_second', '300');
        await page.locator('.validation', {hasText: 'The configuration is valid.'}).waitFor();
        const patch = page.waitForRequest((request) => request.method() === 'PATCH');
        await page.getByRole('button', {name: 'Save changes'}).click();
        assert.deepEqual(JSON.parse((await patch).postData()), {'records.per.second': '300'});
        await page.waitForURL(`**/ui#/connectors/${source}`);
        await page.locator('table.config tr', {hasText: 'records.per.second'})
            .locator('td', {hasText: '300'}).waitFor();
        await headState('RUNNING');
    });

    test('shows a secret as hidden and leaves it alone when editing', async () => {
        const name = `e2e-http-${run}`;
        const pem = path.join(workDir, 'client.pem'); /* never read: the connector stays STOPPED */
        fs.writeFileSync(pem, '');
        const created = await worker.api('POST', '/connectors', {
            name,
            config: {
                'connector.class': 'HttpSink', 'topics': topic, 'http.url': 'http://127.0.0.1:9/',
                'http.ssl.certificate.location': pem, 'http.ssl.key.location': pem,
                'http.ssl.key.password': '${env:E2E_SECRET_VALUE}',
            },
            initial_state: 'STOPPED',
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        await openConnector(name);
        const secretRow = page.locator('table.config tr', {hasText: 'http.ssl.key.password'});
        await secretRow.locator('.badge.secret', {hasText: 'hidden'}).waitFor();
        assert.ok(!(await page.content()).includes('E2E_SECRET_VALUE'));

        await page.goto(`${worker.url}/ui#/connectors/${name}/edit`);
        await page.locator('#f-http_ssl_key_password').waitFor();
        assert.equal(await page.inputValue('#f-http_ssl_key_password'), '');
        assert.match(await page.getAttribute('#f-http_ssl_key_password', 'placeholder'), /hidden/);
        await page.fill('#f-http_timeout_ms', '5000');
        await page.locator('.validation', {hasText: 'The configuration is valid.'}).waitFor();
        const patch = page.waitForRequest((request) => request.method() === 'PATCH');
        await page.getByRole('button', {name: 'Save changes'}).click();
        assert.deepEqual(JSON.parse((await patch).postData()), {'http.timeout.ms': '5000'});
        await page.waitForURL(`**/ui#/connectors/${name}`);
        assert.equal((await worker.api('DELETE', `/connectors/${name}`)).status, 204);
    });

    test('resets the offsets of the stopped sink after a preview', async () => {
        await openConnector(sink);
        const reset = page.getByRole('button', {name: 'Reset offsets…'});
        assert.equal(await reset.getAttribute('aria-disabled'), 'true',
                     'reset is offered only for a STOPPED connector');
        await page.getByRole('button', {name: 'Stop', exact: true}).click();
        await headState('STOPPED');
        await waitFor(async () => (await reset.getAttribute('aria-disabled')) === null,
                      {timeout: UI_TIMEOUT, what: 'the reset button to be enabled'});

        const stored = (await worker.api('GET', `/connectors/${sink}/offsets`)).body.offsets;
        assert.equal(stored.length, 1, JSON.stringify(stored));
        const offset = stored[0].offset.kafka_offset;
        assert.ok(offset > 0);

        await reset.click();
        const dialog = page.locator('dialog[open]');
        await dialog.locator('h2', {hasText: `Reset the offsets of ${sink}`}).waitFor();
        const row = dialog.locator('table.preview tbody tr');
        assert.equal(await row.count(), 1);
        assert.equal((await row.locator('td').nth(0).textContent()).trim(), `${topic} / 0`);
        assert.equal((await row.locator('td').nth(1).textContent()).trim(), String(offset));
        assert.equal((await row.locator('td').nth(2).textContent()).trim(), 'removed');
        await shot('reset-preview');

        /* Escape cancels: nothing changed */
        await page.keyboard.press('Escape');
        await dialog.waitFor({state: 'detached'});
        assert.equal((await worker.api('GET', `/connectors/${sink}/offsets`)).body.offsets.length, 1);

        await reset.click();
        await dialog.getByRole('button', {name: 'Reset 1 offset'}).click();
        await dialog.waitFor({state: 'detached'});
        await waitFor(async () =>
            (await worker.api('GET', `/connectors/${sink}/offsets`)).body.offsets.length === 0,
        {what: 'the offsets to be gone'});
        await page.locator('.toast', {hasText: 'reset'}).first().waitFor();
    });

    test('deletes both connectors after confirmation', async () => {
        for (const name of [sink, source]) {
            await openConnector(name);
            await page.getByRole('button', {name: 'Delete…'}).click();
            const dialog = page.locator('dialog[open]');
            await dialog.getByRole('button', {name: `Delete ${name}`}).click();
            await page.waitForURL(/\/ui#\/$/);
            await page.locator(`tr[data-connector="${name}"]`).waitFor({state: 'detached'});
            assert.equal((await worker.api('GET', `/connectors/${name}`)).status, 404);
        }
        await page.locator('.empty', {hasText: 'No connectors yet'}).waitFor();
    });

    test('the page loaded nothing from another origin and raised no error', () => {
        /* and its Content-Security-Policy blocked nothing it needed */
        const origin = new URL(worker.url).origin;
        assert.ok(requests.length > 20, `only ${requests.length} requests recorded`);
        const foreign = requests.filter((url) => new URL(url).origin !== origin);
        assert.deepEqual(foreign, []);
        assert.deepEqual(pageErrors, []);
    });
});
