/*
 * Starts and stops a real tributary worker for the browser tests, as
 * tests/integration/worker.py does: the binary named by $TRIBUTARY_BIN with a
 * worker.properties on a free loopback port, against the Kafka test bed
 * whose facts are in $TRIBUTARY_BED_DIR/bed.json. Waits are bounded polls.
 */
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export function readBed() {
    const dir = process.env.TRIBUTARY_BED_DIR;
    if (!dir) {
        throw new Error('TRIBUTARY_BED_DIR is not set: start the Kafka test bed with ' +
                        '`tests/bed/bed.sh start DIR` and run with TRIBUTARY_BED_DIR=DIR');
    }
    return JSON.parse(fs.readFileSync(path.join(dir, 'bed.json'), 'utf8'));
}

export function freePort() {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.on('error', reject);
        server.listen(0, '127.0.0.1', () => {
            const {port} = server.address();
            server.close(() => resolve(port));
        });
    });
}

/* Polls condition() until it returns a truthy value, which it returns. */
export async function waitFor(condition, {timeout = 30000, interval = 200, what = 'condition'} = {}) {
    const deadline = Date.now() + timeout;
    for (;;) {
        const value = await condition();
        if (value) {
            return value;
        }
        if (Date.now() > deadline) {
            throw new Error(`timed out after ${timeout / 1000}s waiting for ${what}`);
        }
        await new Promise((resolve) => setTimeout(resolve, interval));
    }
}

export class Worker {
    constructor(dir, settings) {
        this.dir = dir;
        this.settings = settings;
        this.logPath = path.join(dir, 'tributary.log');
        this.proc = null;
        this.exit = null;
        this.answers = []; /* the body of every answer api() received */
        /* in a directory of its own: file connectors may not write where the
         * store lives, and the tests' sinks write into dir */
        this.storePath = path.join(dir, 'data', 'store.db');
    }

    async start() {
        const binary = process.env.TRIBUTARY_BIN;
        if (!binary) {
            throw new Error('TRIBUTARY_BIN is not set: run the tests through scripts/test');
        }
        fs.mkdirSync(path.dirname(this.storePath), {recursive: true});
        this.port = await freePort();
        this.url = `http://127.0.0.1:${this.port}`;
        const settings = {
            listeners: this.url,
            'offset.storage.file.filename': this.storePath,
            ...this.settings,
        };
        const properties = path.join(this.dir, 'worker.properties');
        fs.writeFileSync(properties,
                         Object.entries(settings).map(([k, v]) => `${k}=${v}\n`).join(''));
        const log = fs.openSync(this.logPath, 'a');
        this.proc = spawn(binary, [properties], {
            cwd: this.dir,
            stdio: ['ignore', log, log],
            env: {ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0', ...process.env},
        });
        fs.closeSync(log);
        this.exited = new Promise((resolve) => {
            this.proc.on('exit', (code, signal) => {
                this.exit = {code, signal};
                resolve(this.exit);
            });
        });
        await waitFor(async () => {
            if (this.exit) {
                throw new Error(`tributary exited with ${JSON.stringify(this.exit)}:\n${this.logs()}`);
            }
            try {
                const res = await fetch(`${this.url}/health`);
                return res.status === 200;
            } catch (err) {
                return false;
            }
        }, {timeout: 60000, what: '/health to answer 200'});
        return this;
    }

    /* Stops the worker with SIGTERM; returns {code, signal}. */
    async stop(timeout = 30000) {
        if (!this.proc) {
            return null;
        }
        if (!this.exit) {
            this.proc.kill('SIGTERM');
            const timer = new Promise((resolve) => setTimeout(resolve, timeout, 'timeout'));
            if (await Promise.race([this.exited, timer]) === 'timeout') {
                this.proc.kill('SIGKILL');
                await this.exited;
                throw new Error(`tributary did not stop within ${timeout / 1000}s`);
            }
        }
        return this.exit;
    }

    logs() {
        try {
            return fs.readFileSync(this.logPath, 'utf8');
        } catch (err) {
            return '';
        }
    }

    async api(method, apiPath, body) {
        const res = await fetch(this.url + apiPath, {
            method,
            headers: body === undefined ? {} : {'Content-Type': 'application/json'},
            body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        this.answers.push(text);
        return {status: res.status, body: text ? JSON.parse(text) : null};
    }
}
