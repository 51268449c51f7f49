import { canonicalDigest } from '../../core/digest.ts';
import { windowPolicyDigest } from '../../windows/policy.ts';
import type { CertificateStore } from '../certificate.ts';
import { ChatClient, type ChatClientOptions } from '../client.ts';
import type { JudgeConfig } from '../config.ts';
import { evaluatorIdentity } from '../evaluator-identity.ts';
import type { Ledger } from '../ledger/ledger.ts';
import { LedgerProtocol, type InvocationIdentity } from '../ledger/protocol.ts';
import type { ChatRequestOptions } from '../prompt.ts';
import { LayerDecider } from './layer-decider.ts';
import { layerDefinitionDigest, layerRequestContractDigest, type LayerRole } from './layer-prompt.ts';
import { LAYER_BATTERIES, verifierQuestion, type LayerQuestion } from './layer-questions.ts';
import type { JudgedLayer } from './walk.ts';

/**
 * One decision point of the walk: a layer's judge or its verifier. Each has its own ledger
 * point, definition and request contract (so its own certificates), its own client (the
 * verifier's model may differ), and records through the shared ledger under its own identity.
 */
export interface LayerPoint {
  layer: JudgedLayer;
  role: LayerRole;
  /** The `point` of its ledger keys. */
  point: string;
  questions: readonly LayerQuestion[];
  id: InvocationIdentity;
  protocol: LedgerProtocol;
  client: ChatClient;
  decider: LayerDecider;
  request: ChatRequestOptions;
}

export type LayerPoints = Readonly<Record<JudgedLayer, { layer: LayerPoint; verifier: LayerPoint }>>;

/** Build every layer's and verifier's decision point for this configuration (at open). */
export function layerPoints(cfg: JudgeConfig, certs: CertificateStore, ledger: Ledger, now: () => number, clientOptions: ChatClientOptions): LayerPoints {
  const policyDigest = windowPolicyDigest(cfg.windowPolicy);
  const verifierClientCfg = { ...cfg.client, model: cfg.walk.verifier.model ?? cfg.client.model };
  const clients = { layer: new ChatClient(cfg.client, clientOptions), verifier: new ChatClient(verifierClientCfg, clientOptions) };
  const point = (layer: JudgedLayer, role: LayerRole): LayerPoint => {
    const battery = LAYER_BATTERIES[layer];
    const questions = role === 'layer' ? battery : [verifierQuestion(battery[0]!)];
    const clientCfg = role === 'layer' ? cfg.client : verifierClientCfg;
    // A verifier is decided by its layer's policy table, under its own certificates.
    const policy = cfg.walk.questions[battery[0]!.id]!;
    const request: ChatRequestOptions = {
      model: clientCfg.model,
      maxOutputTokens: clientCfg.maxOutputTokens,
      logprobs: clientCfg.logprobs,
      topLogprobs: clientCfg.topLogprobs,
    };
    const id: InvocationIdentity = {
      windowPolicyDigest: policyDigest,
      decisionDigest: canonicalDigest({ policy, minKappa: cfg.decision.minKappa }),
      certificatesDigest: certs.digest(),
      requestDigest: canonicalDigest({
        model: request.model,
        maxOutputTokens: request.maxOutputTokens,
        logprobs: request.logprobs,
        topLogprobs: request.topLogprobs,
      }),
      definitionDigest: layerDefinitionDigest(role, questions),
      contractDigest: layerRequestContractDigest(role, questions, clientCfg),
      evaluatorDigest: evaluatorIdentity(clientCfg).digest,
      requestedModel: clientCfg.model,
    };
    const decider = new LayerDecider(
      questions,
      certs,
      {
        windowPolicyDigest: policyDigest,
        requestContractDigest: id.contractDigest,
        evaluatorDigest: id.evaluatorDigest,
        requestedModel: id.requestedModel,
        minKappa: cfg.decision.minKappa,
      },
      policy,
    );
    return { layer, role, point: questions[0]!.point, questions, id, protocol: new LedgerProtocol(ledger, id, now), client: clients[role], decider, request };
  };
  const both = (layer: JudgedLayer) => ({ layer: point(layer, 'layer'), verifier: point(layer, 'verifier') });
  return { L1: both('L1'), L2: both('L2'), L3: both('L3'), L4: both('L4') };
}
