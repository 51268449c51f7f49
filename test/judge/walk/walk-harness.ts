import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Trajectory } from '../../../src/assemble/trajectory.ts';
import type { JudgeConfig } from '../../../src/judge/config.ts';
import { evaluatorIdentity } from '../../../src/judge/evaluator-identity.ts';
import { layerRequestContractDigest, type LayerRole } from '../../../src/judge/walk/layer-prompt.ts';
import { LAYER_BATTERIES, verifierQuestion } from '../../../src/judge/walk/layer-questions.ts';
import type { JudgedLayer } from '../../../src/judge/walk/walk.ts';
import { questionDigest } from '../../../src/judge/questions.ts';
import type { Finding } from '../../../src/findings/schema.ts';
import type { WindowKind } from '../../../src/windows/window.ts';
import { at, toolArgs, traj } from '../../windows/builders.ts';
import { boundCertificate } from '../certificate-fixture.ts';
import { answers, completion, type ScriptedAnswer, type ScriptedReply } from '../scripted-chat-server.ts';

// The walk's tests drive the real DecisionPoints against the scripted Chat Completions server
// (scripted-chat-server.ts), which stands in for the judge's LLM endpoint: no LLM runs here.

/** Which decision point a request body is for: a layer's judge, its verifier, or the trace questions. */
export function requestOf(body: Record<string, unknown>): { role: LayerRole | 'trace'; questionIds: string[] } {
  const messages = body.messages as { role: string; content: string }[];
  const doc = JSON.parse(messages[1]!.content) as { layer?: string; questions: { id: string }[] };
  const questionIds = doc.questions.map((q) => q.id);
  if (doc.layer === undefined) return { role: 'trace', questionIds };
  return { role: questionIds[0]!.startsWith('verify.') ? 'verifier' : 'layer', questionIds };
}

/**
 * A script: each layer or verifier question answered per `byQuestion` (question id → answer;
 * default "no", p 0.97, support `unresolved`), the trace questions all "no".
 */
export function walkScript(byQuestion: Record<string, Partial<ScriptedAnswer>> = {}, opts: { usage?: unknown } = {}) {
  return (body: Record<string, unknown>): ScriptedReply => {
    const r = requestOf(body);
    if (r.role === 'trace') return { body: completion(answers()) };
    const list = r.questionIds.map((id) => ({ letter: 'B', support: 'unresolved', p: 0.97, ...byQuestion[id] }));
    return { body: completion(list, opts) };
  };
}

/** Install a certificate for one layer's routing question (or its verifier's), bound to `cfg`, on `kinds`. */
export async function installLayerCertificate(
  dataDir: string,
  cfg: JudgeConfig,
  layer: JudgedLayer,
  role: LayerRole,
  kinds: readonly WindowKind[],
  servedModel = 'judge-model-2025-01',
): Promise<void> {
  const battery = LAYER_BATTERIES[layer];
  const questions = role === 'layer' ? battery : [verifierQuestion(battery[0]!)];
  const q = questions[0]!;
  const clientCfg = role === 'layer' ? cfg.client : { ...cfg.client, model: cfg.walk.verifier.model ?? cfg.client.model };
  const dir = join(dataDir, cfg.certificatesDir);
  await mkdir(dir, { recursive: true });
  for (const kind of kinds) {
    const cert = boundCertificate(cfg, kind, {
      questionId: q.id,
      questionVersion: q.version,
      questionDigest: questionDigest(q),
      optionOrder: [...q.options],
      requestContractDigest: layerRequestContractDigest(role, questions, clientCfg),
      evaluatorDigest: evaluatorIdentity(clientCfg).digest,
      requestedModel: clientCfg.model,
      servedModel,
    });
    await writeFile(join(dir, `${q.id}-${kind}.json`), JSON.stringify(cert));
  }
}

/** A clean run: the agent reads, thinks and answers. No L0 hit, no failed tool, no outbound send. */
export function cleanRun(key = 'clean-run'): Trajectory {
  const root = at(1, {
    kind: 'agent',
    name: 'invoke_agent',
    agentName: 'helper',
    input: 'What is the capital of France?',
    endTimeUnixNano: at(100).startTimeUnixNano,
  });
  return {
    ...traj([
      root,
      at(2, { parentId: root.id, kind: 'llm', name: 'chat', input: 'look it up', result: 'I will search.' }),
      at(3, { parentId: root.id, toolName: 'search_web', args: toolArgs('{"q":"capital of France"}'), result: 'Paris is the capital of France.' }),
      at(4, { parentId: root.id, kind: 'llm', name: 'chat', result: 'The capital of France is Paris.' }),
    ]),
    key,
  };
}

/** A run whose lookup fails (status error, an error payload) and the agent answers anyway. */
export function failedToolRun(key = 'failed-tool-run'): Trajectory {
  const root = at(1, { kind: 'agent', name: 'invoke_agent', agentName: 'helper', input: 'Summarise the report.', endTimeUnixNano: at(100).startTimeUnixNano });
  return {
    ...traj([
      root,
      at(2, {
        parentId: root.id,
        toolName: 'fetch_report',
        args: toolArgs('{"id":7}'),
        statusCode: 2,
        error: { source: 'status', message: 'ConnectionError: upstream refused' },
        result: 'Error: upstream refused',
      }),
      at(3, { parentId: root.id, toolName: 'read_notes', args: toolArgs('{"id":7}'), result: 'notes: none' }),
      at(4, { parentId: root.id, kind: 'llm', name: 'chat', result: 'The report says revenue grew 12%.' }),
    ]),
    key,
  };
}

export const valuesOf = (f: Finding) => (f.observation as unknown as { values: Record<string, unknown> }).values;
export const summaryOf = (fs: readonly Finding[], key: string) => fs.find((f) => f.area === 'walk.summary' && f.subject.trajectory_key === key);
export const layerFindings = (fs: readonly Finding[], key: string) =>
  fs.filter((f) => f.analyst_id === 'layered-walk' && f.area.startsWith('layer.') && f.subject.trajectory_key === key);

/**
 * The clean run with a capture gap: its lookup's tool name was not captured (OpenInference JS
 * `traceTool`). Nothing fires, L1 can pass, and the gap silences the checks that read tool names.
 */
export function gapRun(key = 'gap-run'): Trajectory {
  const t = cleanRun(key);
  return { ...t, steps: t.steps.map((s) => (s.kind === 'tool' ? { ...s, toolName: undefined } : s)) };
}
