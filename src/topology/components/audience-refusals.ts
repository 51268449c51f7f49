import type { AudienceRefusals } from '../../sinks/audience-refusals.ts';
import { type Component, once } from '../component.ts';
import { REFUSAL } from '../../ingest/refusal.ts';

/**
 * The quarantine log of refused external views as a component: closed with the sinks. Its
 * refusals are not a health problem (ingestion carries on); only a quarantine log that cannot
 * write is, as for the trajectory log: what it holds is kept nowhere else.
 */
export function audienceRefusalsComponent(refusals: AudienceRefusals): Component {
  return {
    name: 'audience-quarantine',
    start: async () => {},
    stop: once(() => refusals.close()),
    health: () => (refusals.failure !== undefined ? REFUSAL.audienceQuarantineUnwritable : undefined),
  };
}
