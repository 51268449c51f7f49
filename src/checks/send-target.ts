import { canonicalJson } from '../core/canonical-json.ts';
import type { Step } from '../normalize/step.ts';

/**
 * Argument names that say where a send goes (compared lower-case, without `_`, `-`, `.`):
 * the recipient, channel, account or address of the action.
 */
const RECIPIENT_KEYS: ReadonlySet<string> = new Set([
  'to',
  'cc',
  'bcc',
  'recipient',
  'recipients',
  'email',
  'emailaddress',
  'address',
  'phone',
  'phonenumber',
  'number',
  'channel',
  'channelid',
  'chatid',
  'user',
  'userid',
  'username',
  'account',
  'accountid',
  'destination',
  'target',
  'url',
  'webhook',
  'webhookurl',
  'endpoint',
  'repo',
  'repository',
  'branch',
]);

/**
 * What an outbound call acts on, for gate coverage (`gateCoverage` in `tool-roles.ts`): its tool
 * name and the values of its recipient-like arguments; the tool name alone when its JSON-object
 * arguments name no recipient; the tool name and the arguments' digest when they are not a JSON
 * object. Undefined when the arguments were not captured: the target is unknown, so the call can
 * neither be told apart from another send nor be said to repeat one.
 *
 * Calls recorded as `{"args": [...], "kwargs": {...}}` (smolagents, OpenLLMetry, LlamaIndex) are
 * read through their `kwargs`.
 */
export function sendTarget(step: Step): string | undefined {
  if (step.args === undefined) return undefined;
  const tool = step.toolName ?? step.name;
  if (!('parsed' in step.args)) return `${tool}\u0000${step.args.digest}`;
  const args = unwrapKwargs(step.args.parsed);
  if (args === undefined) return `${tool}\u0000${step.args.digest}`;
  const recipients: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) if (RECIPIENT_KEYS.has(k.toLowerCase().replace(/[_.-]/g, ''))) recipients[k] = v;
  return Object.keys(recipients).length === 0 ? tool : `${tool}\u0000${canonicalJson(recipients)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function unwrapKwargs(parsed: unknown): Record<string, unknown> | undefined {
  if (!isRecord(parsed)) return undefined;
  const kwargs = parsed['kwargs'];
  const wrapper = isRecord(kwargs) && Object.keys(parsed).every((k) => k === 'args' || k === 'kwargs' || k === 'sanitize_inputs_outputs');
  return wrapper ? kwargs : parsed;
}
