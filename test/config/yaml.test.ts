import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/cli/resolve-config.ts';
import { readConfigFile } from '../../src/config/load.ts';
import { validateConfig } from '../../src/config-schema.ts';
import { ConfigError } from '../../src/errors.ts';
import { runCli } from '../helpers/cli.ts';

async function file(name: string, content: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'trajwatch-yaml-')), name);
  await writeFile(path, content);
  return path;
}

/** The ConfigError's lines for `content` written as `name`. */
async function issues(name: string, content: string): Promise<readonly string[]> {
  const path = await file(name, content);
  try {
    validateConfig(await readConfigFile(path));
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

const SAME = {
  dataDir: './data',
  receiver: { otlpHttp: '127.0.0.1:4318', maxBodyBytes: 1048576, tls: { certFile: '/etc/tw/cert.pem', keyFile: '/etc/tw/key.pem' } },
  assembler: { quietPeriodMs: 500, idleTimeoutMs: 30000 },
  kafka: {
    brokers: ['kafka-1:9093', 'kafka-2:9093'],
    sasl: { mechanism: 'scram-sha-512', username: 'trajwatch', passwordFile: '/run/secrets/kafka' },
    ssl: { caFile: '/etc/ssl/kafka-ca.pem' },
  },
  log: { level: 'debug' },
};

const SAME_YAML = `# The same configuration as SAME, as a Collector user writes it.
dataDir: ./data
receiver:
  otlpHttp: 127.0.0.1:4318
  maxBodyBytes: 1048576
  tls: { certFile: /etc/tw/cert.pem, keyFile: /etc/tw/key.pem }
assembler:
  quietPeriodMs: 500
  idleTimeoutMs: 30000
kafka:
  brokers: [kafka-1:9093, kafka-2:9093]
  sasl:
    mechanism: scram-sha-512
    username: trajwatch
    passwordFile: /run/secrets/kafka
  ssl:
    caFile: /etc/ssl/kafka-ca.pem
log:
  level: debug
`;

describe('YAML configuration files', () => {
  it('give exactly the configuration the same JSON gives (.yaml and .yml)', async () => {
    const fromJson = validateConfig(await readConfigFile(await file('config.json', JSON.stringify(SAME))));
    for (const name of ['config.yaml', 'config.yml', 'CONFIG.YAML']) {
      expect(validateConfig(await readConfigFile(await file(name, SAME_YAML))), name).toEqual(fromJson);
    }
  });

  it('are validated by the same strict schema: every error names key, value and line', async () => {
    const yaml = `receiver:
  otlpHttp: 127.0.0.1:99999
  maxBodyBytes: 0
  bogus: 1
assembler:
  quietPeriodMs: soon
log: { level: loud }
sinks:
  kafka:
    brokers: []
`;
    expect(await issues('bad.yaml', yaml)).toEqual([
      'receiver.otlpHttp: expected HOST:PORT with a port from 0 to 65535, got "127.0.0.1:99999" (value: "127.0.0.1:99999") (line 2)',
      'receiver.maxBodyBytes: Too small: expected number to be >=1 (value: 0) (line 3)',
      'receiver.bogus: unknown key (line 4)',
      'assembler.quietPeriodMs: Invalid input: expected number, received string (value: "soon") (line 6)',
      'log.level: Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent" (value: "loud") (line 7)',
      'sinks.kafka.brokers: Too small: expected array to have >=1 items (value: []) (line 10)',
    ]);
  });

  it('never convert a type silently: yes and on are not booleans where the schema wants one', async () => {
    expect(await issues('c.yaml', 'sinks:\n  trajectoryLlmInput: yes\n')).toEqual([
      'sinks.trajectoryLlmInput: Invalid input: expected boolean, received string (value: "yes") (line 2)',
    ]);
    expect(await issues('c.yaml', 'sinks:\n  trajectoryLlmInput: on\n')).toEqual([
      'sinks.trajectoryLlmInput: Invalid input: expected boolean, received string (value: "on") (line 2)',
    ]);
  });

  it("name a key missing under a section by the section's line", async () => {
    expect(await issues('m.yaml', 'dataDir: x\nreceiver:\n  auth:\n    apiKeyHeader: x-api-key\n')).toEqual([
      'receiver.auth: set exactly one of tokenEnv or tokenFile (the token itself never goes in the configuration) (value: {"apiKeyHeader":"x-api-key"}) (line 3)',
    ]);
  });

  it.each([
    ['a duplicate key', 'log:\n  level: info\nlog:\n  level: debug\n', 'line 3: not valid YAML: Map keys must be unique'],
    [
      'bad indentation',
      'receiver:\n  otlpHttp: [\n',
      'line 3: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ],
    ['a custom tag', 'dataDir: !!js/function "f"\n', 'line 1: not valid YAML: Unresolved tag: tag:yaml.org,2002:js/function'],
    ['two documents', 'dataDir: a\n---\ndataDir: b\n', 'line 2: one YAML document expected, found 2'],
    ['a list at the root', '- dataDir\n', '(root): expected a YAML mapping, got ["dataDir"]'],
    ['an empty file', '# only a comment\n', '(root): expected a YAML mapping, got null'],
  ])('refuse %s, naming the line', async (_, yaml, message) => {
    expect(await issues('x.yaml', yaml)).toEqual([message]);
  });

  it('name no file line for a value that came from the environment or a flag', async () => {
    const path = await file('env.yaml', 'receiver:\n  otlpHttp: 127.0.0.1:4318\n  otlpGrpc: 127.0.0.1:4317\n');
    const error = await resolveConfig(path, [{ path: ['receiver', 'otlpGrpc'], value: 'no-port' }], { TRAJWATCH_OTLP_HTTP: 'also-no-port' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      'receiver.otlpHttp (from env TRAJWATCH_OTLP_HTTP): expected HOST:PORT with a port from 0 to 65535, got "also-no-port" (value: "also-no-port")',
      'receiver.otlpGrpc (from a command-line flag): expected HOST:PORT with a port from 0 to 65535, got "no-port" (value: "no-port")',
    ]);
  });

  it('JSON files keep their messages (JSON.parse gives no positions, so no line)', async () => {
    expect(await issues('c.json', JSON.stringify({ receiver: { maxBodyBytes: 0 } }))).toEqual([
      'receiver.maxBodyBytes: Too small: expected number to be >=1 (value: 0)',
    ]);
  });

  it('trajwatch validate-config reads YAML: valid, and every error at once with exit 1', async () => {
    const good = await file('config.yaml', SAME_YAML);
    const ok = await runCli(['validate-config', good]);
    expect(ok).toMatchObject({ code: 0, stdout: `${good}: valid\n` });
    const bad = await file('config.yml', 'receiver:\n  maxBodyBytes: 0\nbogus: true\n');
    const run = await runCli(['validate-config', bad]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `trajwatch: invalid configuration in ${bad}:\n  - receiver.maxBodyBytes: Too small: expected number to be >=1 (value: 0) (line 2)\n  - bogus: unknown key (line 3)\n`,
    );
  });
});
