import { cp, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { trailFiles } from '../helpers/trail.ts';

const CAPTURES = new URL('../fixtures/captures/', import.meta.url).pathname;

/** One JSON object per line of `--json` output: the violations, then the summary. */
export interface VerifyJson {
  violations: { invariant: string; location: { file?: string; line?: number; offset?: number; topic?: string }; key?: string; what: string }[];
  summary: { ok: boolean; invariants: { id: string; checked: number; violations: number; note?: string }[]; read: { source: string; records: number }[] };
}

/** Runs `trajwatch verify --data-dir dir --json [...extra]` and parses what it printed. */
export async function verifyJson(dir: string, extra: string[] = []): Promise<{ code: number | null; out: VerifyJson; stderr: string }> {
  const run = await runCli(['verify', '--data-dir', dir, '--json', ...extra]);
  const objects = run.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { kind: string });
  const summary = objects.find((o) => o.kind === 'summary') as unknown as VerifyJson['summary'] | undefined;
  expect(summary, `no summary in:\n${run.stdout}\n${run.stderr}`).toBeDefined();
  return {
    code: run.code,
    out: { violations: objects.filter((o) => o.kind === 'violation') as unknown as VerifyJson['violations'], summary: summary! },
    stderr: run.stderr,
  };
}

/** The framework captures' protobuf bodies (LangGraph, LangChain.js, LlamaIndex, OpenLLMetry, smolagents), in order. */
export async function captureFiles(): Promise<string[]> {
  const out: string[] = [];
  for (const framework of (await readdir(CAPTURES)).sort()) {
    for (const f of (await readdir(join(CAPTURES, framework))).filter((x) => x.endsWith('.pb')).sort()) out.push(join(CAPTURES, framework, f));
  }
  return out;
}

/** A data directory written by `replay` of `files` (trajectories.jsonl and findings.jsonl in it). */
export async function replayDir(files: readonly string[], configJson?: Record<string, unknown>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-verify-'));
  const config = configJson === undefined ? [] : ['--config', join(dir, 'config.json')];
  if (configJson !== undefined) await writeFile(join(dir, 'config.json'), JSON.stringify({ dataDir: dir, ...configJson }));
  const run = await runCli(['replay', ...files, '--trajectories', join(dir, 'trajectories.jsonl'), '--findings', join(dir, 'findings.jsonl'), ...config]);
  expect(run.code, run.stderr).toBe(0);
  return dir;
}

/** The TRAIL traces and the framework captures, replayed into one directory. */
export async function cleanReplayDir(): Promise<string> {
  return replayDir([...trailFiles(), ...(await captureFiles())]);
}

/** A copy of `dir` to corrupt. */
export async function copyDir(dir: string): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), 'trajwatch-verify-bad-'));
  await cp(dir, copy, { recursive: true });
  return copy;
}

/** The lines of a JSON-lines file, parsed. */
export async function jsonLines<T = Record<string, unknown>>(path: string): Promise<T[]> {
  return (await readFile(path, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

/** Rewrites a JSON-lines file from `rows`. */
export async function writeJsonLines(path: string, rows: readonly unknown[]): Promise<void> {
  await writeFile(path, rows.map((r) => `${typeof r === 'string' ? r : JSON.stringify(r)}\n`).join(''));
}
